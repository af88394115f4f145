// An editor written with the TypeScript ACP SDK's client side, for the
// end-to-end tests: it starts `kandev acp` and talks to it over its stdio.
//
//   node client.mjs first  PROMPT        initialize, session/new, prompt, quit
//   node client.mjs reopen ID PROMPT     initialize, session/list, session/load ID, prompt, quit
//
// KANDEV_TS_SDK is the SDK's dist/acp.js, KANDEV_BIN the kandev binary;
// further arguments for `kandev acp` come in KANDEV_ACP_ARGS (JSON array).
// KANDEV_TS_MCP (JSON array) is the mcpServers given to session/new and
// session/load; KANDEV_TS_SET (JSON {mode, options: {id: value}}) is set
// with session/set_mode and session/set_config_option after session/new
// (its options also after session/load).
// It prints one JSON report on stdout and exits 0 when every call succeeded.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const acp = await import(pathToFileURL(process.env.KANDEV_TS_SDK).href);
const [mode, ...rest] = process.argv.slice(2);
const cwd = process.cwd();
const extra = JSON.parse(process.env.KANDEV_ACP_ARGS || "[]");
const mcpServers = JSON.parse(process.env.KANDEV_TS_MCP || "[]");
const toSet = JSON.parse(process.env.KANDEV_TS_SET || "{}");
// setupOf is the agent's setup as a new or load answer shows it.
const setupOf = (r) => ({ modes: r.modes ?? null, models: r.models ?? null, configOptions: r.configOptions ?? null });

const kandev = spawn(process.env.KANDEV_BIN, ["acp", ...extra], { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => kandev.on("exit", (code, signal) => resolve(code ?? signal)));

const report = {};
const seen = new Set(); // the sessions updates came for
// updates are kept in arrival order, summarised to kind, text and status.
const updates = [];
const client = {
  async sessionUpdate({ sessionId, update }) {
    seen.add(sessionId);
    const text = update.content?.type === "text" ? update.content.text : undefined;
    updates.push({ kind: update.sessionUpdate, text, status: update.status });
  },
  async requestPermission({ options }) {
    const allow = options.find((o) => o.kind === "allow_once");
    return allow ? { outcome: { outcome: "selected", optionId: allow.optionId } } : { outcome: { outcome: "cancelled" } };
  },
  async readTextFile() {
    throw acp.RequestError.methodNotFound("fs/read_text_file");
  },
  async writeTextFile() {
    throw acp.RequestError.methodNotFound("fs/write_text_file");
  },
};
const stream = acp.ndJsonStream(Writable.toWeb(kandev.stdin), Readable.toWeb(kandev.stdout));
const conn = new acp.ClientSideConnection(() => client, stream);

// take returns the updates so far and forgets them.
const take = () => updates.splice(0, updates.length);

const init = await conn.initialize({
  protocolVersion: acp.PROTOCOL_VERSION,
  clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } },
});
report.capabilities = init.agentCapabilities;
report.agentName = init.agentInfo?.name;

let sessionId;
if (mode === "first") {
  const created = await conn.newSession({ cwd, mcpServers });
  sessionId = created.sessionId;
  report.setup = setupOf(created);
  if (toSet.mode) {
    await conn.setSessionMode({ sessionId, modeId: toSet.mode });
  }
  for (const [configId, value] of Object.entries(toSet.options ?? {})) {
    report.setOptions = (await conn.setSessionConfigOption({ sessionId, configId, value })).configOptions;
  }
} else if (mode === "reopen") {
  sessionId = rest.shift();
  report.listed = [];
  let cursor;
  do {
    const page = await conn.listSessions({ cwd, cursor });
    report.listed.push(...page.sessions.map((s) => ({ sessionId: s.sessionId, title: s.title, updatedAt: s.updatedAt })));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  const began = performance.now();
  report.setup = setupOf(await conn.loadSession({ sessionId, cwd, mcpServers }));
  report.loadMs = Math.round(performance.now() - began);
  report.replay = take();
  for (const [configId, value] of Object.entries(toSet.options ?? {})) {
    report.setOptions = (await conn.setSessionConfigOption({ sessionId, configId, value })).configOptions;
  }
} else {
  throw new Error(`unknown mode ${mode}`);
}
report.sessionId = sessionId;

const [prompt] = rest;
report.stopReason = (await conn.prompt({ sessionId, prompt: [{ type: "text", text: prompt }] })).stopReason;
report.turn = take();

// The editor goes away: kandev acp sees its stdin close and exits.
kandev.stdin.end();
report.updatedSessions = [...seen];
report.exitCode = await exited;
// Writes to a pipe are asynchronous: exit once the report is flushed.
process.stdout.write(JSON.stringify(report) + "\n", () => process.exit(0));
