"""The parts of the one converter; ``acpref.codec`` is its face, and the factory that builds it.

* ``paths``: wire names, and decode errors with their wire paths;
* ``typeinfo``: what an annotation is (list, dict, union, enum) and a field's wire markers;
* ``primitives``: strict strings, numbers, booleans; JSON arrays and objects;
* ``unions``: tagged, keyed and primitive unions, and the nullable wrapper;
* ``classes``: the models, their fields' markers, flattened unions, the one irregular shape.

Layer L1, like the codec: no protocol rules, no I/O, no threads.
"""
