// A client written on the official TypeScript SDK (@agentclientprotocol/sdk 2.4.0), checked by
// acpref check-client (tests/test_check_client.py).
//
// Usage: node check_client.mjs PYTHON REPORT.json CWD. It launches
// `PYTHON -m acpref check-client --serve REPORT.json` and plays its user, as
// tests/broken/check_clients.py's Conforming does: step one, step two (cancelling while the
// permission request is open, then answering it cancelled), and a session/load. It serves files
// (read and write, on disk) and permissions; it advertises no terminal and no elicitation. Only
// the SDK's public API is used (acp.client(), onRequest, onNotification, ndJsonStream,
// connectWith): what the grader sees is the SDK's own wire behaviour.

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [python, report, cwd] = process.argv.slice(2);
const agentProcess = spawn(python, ["-m", "acpref", "check-client", "--serve", report], {
  stdio: ["pipe", "pipe", "inherit"],
});
const stream = acp.ndJsonStream(
  Writable.toWeb(agentProcess.stdin),
  Readable.toWeb(agentProcess.stdout),
);

// check-client says when the dialog shows: the client has answered its probe, sent after the
// permission request, so it had read the request (acpref/testing/_client_steps.py DIALOG_SHOWN).
const DIALOG_SHOWN = "the permission dialog is showing";
let dialogShown;
const shown = new Promise((resolve) => (dialogShown = resolve));

const app = acp
  .client()
  .onNotification("session/update", ({ params }) => {
    const text = params.update?.content?.text;
    if (typeof text === "string" && text.includes(DIALOG_SHOWN)) dialogShown();
  })
  .onRequest("session/request_permission", async ({ params, agent }) => {
    if (params.toolCall.toolCallId === "check-cancel") {
      // The user presses Stop while the dialog is open (once it shows; bounded): cancel, then
      // answer it cancelled.
      let timer;
      const bound = new Promise((resolve) => (timer = setTimeout(resolve, 30000)));
      await Promise.race([shown, bound]);
      clearTimeout(timer); // a pending timer would keep node alive for its 30 s after the run
      await agent.notify("session/cancel", { sessionId: params.sessionId });
      return { outcome: { outcome: "cancelled" } };
    }
    const allow = params.options.find((option) => option.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .onRequest("fs/read_text_file", ({ params }) => {
    let text;
    try {
      text = readFileSync(params.path, "utf8");
    } catch (error) {
      if (error.code === "ENOENT") throw acp.RequestError.resourceNotFound(params.path);
      throw error;
    }
    const lines = text.split(/(?<=\n)/);
    const start = params.line ? params.line - 1 : 0;
    const end = params.limit != null ? start + params.limit : undefined;
    return { content: lines.slice(start, end).join("") };
  })
  .onRequest("fs/write_text_file", ({ params }) => {
    writeFileSync(params.path, params.content, "utf8");
    return {};
  });

await app.connectWith(stream, async (agent) => {
  await agent.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
    clientInfo: { name: "acpref-test-ts-client", version: "1" },
  });
  const { sessionId } = await agent.request("session/new", { cwd, mcpServers: [] });
  for (const text of ["step one", "step two"]) {
    await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
  }
  await agent.request("session/load", { sessionId, cwd, mcpServers: [] });
});
// The end of the agent's input ends the connection (transports.mdx); it writes its report.
agentProcess.stdin.end();
await new Promise((resolve) => agentProcess.on("exit", resolve));
