"""The threaded shell around the protocol core (layer L3): streams, threads, the connection."""
