// The portal in a real browser: Debian's chromium, headless, driven by playwright-core.
//
// Starts a fake Todoist on 127.0.0.1 (its identity call answers only the right token), then the
// real built binary as `workbench portal` with a temporary WORKBENCH_HOME and the encrypted file
// secret store (so a second workbench process, the "agent", shares the credentials), and in the
// browser: loads the portal, is refused with a wrong token, connects Todoist by filling the connect
// form (a wrong token first), sees it connected with its account, lets an agent session run tools
// that write audit rows, filters the audit log, checks the vault page shows names but no value,
// and disconnects (cancelling the confirmation once). Screenshots go to $PORTAL_SCREENSHOTS or a
// new temp dir, printed at the end with the time taken; everything else is removed.
//
// Run: node --test tests/portal/portal.test.mjs   (scripts/test-portal.sh does the set-up)

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, mkdirSync, rmSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const BIN = process.env.WORKBENCH_BIN || join(ROOT, "target/debug/workbench");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const GOOD = "todoist-good-token-0123456789abcdef";
const VAULT_VALUE = "s3cr3t-value-98765";

/** A fake Todoist API v1: /user, /projects and a failing /tasks, all behind the bearer token. */
async function fakeTodoist() {
  const requests = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method, url: req.url, auth: req.headers.authorization });
    const reply = (status, body) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${GOOD}`) return reply(401, { error: "Invalid token" });
    const path = req.url.split("?")[0];
    if (path === "/user") return reply(200, { full_name: "Ada Lovelace", email: "ada@example.com" });
    if (path === "/projects") {
      return reply(200, { results: [{ id: "6Jf8VQXxpwv56VQ7", name: "Inbox", inbox_project: true }], next_cursor: null });
    }
    if (path === "/tasks") return reply(503, { error: "Service temporarily unavailable" });
    return reply(404, { error: "not found" });
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  return { url: `http://127.0.0.1:${server.address().port}`, requests, close: () => server.close() };
}

/** The environment of both workbench processes: nothing from the developer's WORKBENCH_* settings. */
function workbenchEnv(home, fakeUrl) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("WORKBENCH_")));
  return {
    ...env,
    HOME: home,
    WORKBENCH_HOME: join(home, "data"),
    WORKBENCH_SECRET_STORE: "file",
    WORKBENCH_VAULT_PASSPHRASE: "portal test passphrase",
    WORKBENCH_NO_BROWSER: "1",
    WORKBENCH_TODOIST_BASE_URL: fakeUrl,
  };
}

/** `workbench portal`: resolves with its URL (the first stdout line) and a stop function. */
function startPortal(env) {
  const child = spawn(BIN, ["portal"], { env, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((ok) => child.on("exit", (code) => ok(code)));
  const url = new Promise((ok, fail) => {
    const lines = createInterface({ input: child.stdout });
    lines.once("line", (line) => {
      const m = /^workbench portal: (http:\/\/127\.0\.0\.1:\d+\/portal\/[0-9a-f]{64}\/)$/.exec(line);
      m ? ok(m[1]) : fail(new Error(`unexpected first line: ${line}`));
    });
    child.on("exit", (code) => fail(new Error(`workbench portal exited with ${code}: ${stderr}`)));
  });
  const timer = setTimeout(() => child.kill(), 120_000);
  return {
    url,
    async stop() {
      child.stdin.end(); // the portal stops at the end of its input
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** An agent: the real binary speaking MCP on stdio, one execute_tools batch, then EOF. */
async function agentRuns(env, executions) {
  const child = spawn(BIN, [], { env, stdio: ["pipe", "pipe", "pipe"] });
  const lines = createInterface({ input: child.stdout });
  const waiting = new Map();
  lines.on("line", (line) => {
    const msg = JSON.parse(line); // nothing but JSON-RPC on stdout
    if (msg.id !== undefined && waiting.has(msg.id)) waiting.get(msg.id)(msg);
  });
  const call = (id, method, params) =>
    new Promise((ok) => {
      waiting.set(id, ok);
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  const init = await call(1, "initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "portal-browser-test", version: "1.0.0" },
  });
  assert.equal(init.result.serverInfo.name.length > 0, true);
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  const out = await call(2, "tools/call", { name: "execute_tools", arguments: { executions } });
  child.stdin.end();
  await new Promise((ok) => child.on("exit", ok));
  return JSON.parse(out.result.content[0].text);
}

/** An agent that stays up: the real binary on stdio without elicitation; `run` sends one batch. */
async function agentSession(env) {
  const child = spawn(BIN, [], { env, stdio: ["pipe", "pipe", "pipe"] });
  const lines = createInterface({ input: child.stdout });
  const waiting = new Map();
  let next = 1;
  lines.on("line", (line) => {
    const msg = JSON.parse(line);
    if (msg.id !== undefined && waiting.has(msg.id)) waiting.get(msg.id)(msg);
  });
  const call = (method, params) =>
    new Promise((ok) => {
      const id = next++;
      waiting.set(id, ok);
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  await call("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "approval-browser-test", version: "1.0.0" } });
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  return {
    run: async (executions) => JSON.parse((await call("tools/call", { name: "execute_tools", arguments: { executions } })).result.content[0].text),
    close: async () => {
      child.stdin.end();
      await new Promise((ok) => child.on("exit", ok));
    },
  };
}

test("the portal in headless chromium: connect, audit filters, vault, disconnect", async (t) => {
  const started = performance.now();
  const home = mkdtempSync(join(tmpdir(), "workbench-portal-"));
  const shots = process.env.PORTAL_SCREENSHOTS || mkdtempSync(join(tmpdir(), "workbench-portal-screenshots-"));
  mkdirSync(shots, { recursive: true });
  const fake = await fakeTodoist();
  const env = workbenchEnv(home, fake.url);
  // One upstream MCP server pasted into config.json by hand (its command cannot speak MCP), so
  // the apps page has a server row to show.
  mkdirSync(env.WORKBENCH_HOME, { recursive: true });
  writeFileSync(join(env.WORKBENCH_HOME, "config.json"), JSON.stringify({ mcp_servers: { notes: { command: "true", args: ["--notes"] } } }));
  const portal = startPortal(env);
  const url = await portal.url;
  const origin = new URL(url).origin;

  const context = await chromium.launchPersistentContext(join(home, "chromium-profile"), {
    executablePath: CHROMIUM,
    headless: true, // playwright passes --headless
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      // Belt and braces: this browser resolves no name but loopback.
      "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    ],
    viewport: { width: 1280, height: 900 },
  });
  const cspViolations = [];
  context.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(10_000);
  const row = (name) => page.locator(`tr[data-integration="${name}"]`);
  const pagesSeen = [];
  page.on("load", async () => pagesSeen.push(await page.content().catch(() => "")));

  try {
    await t.test("loads the portal; a wrong token gets nothing", async () => {
      const res = await page.goto(url);
      assert.equal(res.status(), 200);
      assert.equal(res.headers()["cache-control"], "no-store");
      assert.match(await page.title(), /Integrations · workbench portal/);
      assert.equal(await row("todoist").getAttribute("data-state"), "none");
      assert.match(await page.locator(".storetag").innerText(), /Encrypted file/);
      const wrong = url.replace(/\/portal\/(.)/, (_, c) => `/portal/${c === "a" ? "b" : "a"}`);
      const refused = await page.goto(wrong);
      assert.equal(refused.status(), 404);
      assert.match(await page.locator("body").innerText(), /There is nothing at this address/);
      await page.goto(url);
      await page.screenshot({ path: join(shots, "1-integrations.png"), fullPage: true });
    });

    await t.test("connects Todoist through the same connect page, a wrong token first", async () => {
      const [popup] = await Promise.all([
        context.waitForEvent("page"),
        row("todoist").getByRole("button", { name: "Connect Todoist" }).click(),
      ]);
      // The portal's POST answers with the same connect page the connect meta-tool links to.
      await popup.waitForURL(/\/connect\/[0-9a-f]{32}$/);
      assert.match(await popup.locator("h1").innerText(), /Connect Todoist/);
      await popup.fill("#token", "not-the-right-token");
      await popup.click("button[type=submit]");
      assert.match(await popup.locator(".err").innerText(), /Invalid token.*Nothing was stored/s);
      await popup.fill("#token", GOOD);
      await popup.click("button[type=submit]");
      assert.match(await popup.locator(".ok").innerText(), /connected to Todoist as Ada Lovelace <ada@example\.com>/);
      await popup.screenshot({ path: join(shots, "2-connect-page.png") });
      await popup.close();
      // Back on the portal tab: it reloads itself and shows the account.
      await page.bringToFront();
      await page.locator('tr[data-integration="todoist"][data-state="stored"]').waitFor();
      assert.match(await row("todoist").locator("td.account").innerText(), /Ada Lovelace <ada@example\.com>/);
      await page.screenshot({ path: join(shots, "2-portal-connected.png"), fullPage: true });
      const identity = fake.requests.filter((r) => r.url === "/user");
      assert.deepEqual(identity.map((r) => r.auth), ["Bearer not-the-right-token", `Bearer ${GOOD}`]);
    });

    await t.test("an agent's tool calls land in the audit log, which filters", async () => {
      const out = await agentRuns(env, [
        { tool: "todoist_list_projects", args: {} },
        { tool: "todoist_list_tasks", args: {} },
        {
          tool: "vault_set_secret",
          args: { name: "deploy_key", value: VAULT_VALUE, description: "CI deploy key", allowed_hosts: ["api.example.com"] },
        },
      ]);
      assert.equal(out.results[0].result.projects[0].name, "Inbox", JSON.stringify(out));
      assert.equal(out.results[1].error.code, "UPSTREAM_ERROR");
      assert.equal(out.results[2].result.stored, true);

      await page.getByRole("link", { name: "Audit log" }).click();
      const rows = page.locator("table.audit tbody tr");
      assert.equal(await rows.count(), 3);
      await page.selectOption("select[name=integration]", "todoist");
      await page.click("form.filters button[type=submit]");
      await page.waitForURL(/integration=todoist/);
      assert.equal(await rows.count(), 2);
      await page.selectOption("select[name=status]", "error");
      await page.click("form.filters button[type=submit]");
      await page.waitForURL(/status=error/);
      assert.equal(await rows.count(), 1);
      assert.equal(await rows.first().locator("code").first().innerText(), "todoist_list_tasks");
      assert.match(await rows.first().innerText(), /UPSTREAM_ERROR[\s\S]*Service temporarily unavailable/);
      await page.screenshot({ path: join(shots, "3-audit-filtered.png"), fullPage: true });
      await page.getByRole("link", { name: "Clear" }).click();
      await page.fill("input[name=text]", "deploy_key");
      await page.press("input[name=text]", "Enter");
      await page.waitForURL(/text=deploy_key/);
      assert.equal(await rows.count(), 1);
      assert.equal(await rows.first().locator("code").first().innerText(), "vault_set_secret");
      assert.equal((await page.content()).includes(VAULT_VALUE), false, "the vault value is not in the audit log");
      await page.goto(`${url}audit`);
      await page.screenshot({ path: join(shots, "4-audit.png"), fullPage: true });
    });

    await t.test("the secrets page lists the vault name and hosts, and the store", async () => {
      await page.getByRole("link", { name: "Secrets" }).click();
      const secret = page.locator('tr[data-secret="deploy_key"]');
      assert.match(await secret.innerText(), /deploy_key\s+CI deploy key\s+api\.example\.com/);
      const store = await page.locator("#store").innerText();
      assert.match(store, /Encrypted file/);
      assert.match(store, /Answers/);
      assert.equal((await page.content()).includes(VAULT_VALUE), false);
      await page.screenshot({ path: join(shots, "5-secrets.png"), fullPage: true });
      await page.getByRole("link", { name: "Custom apps" }).click();
      assert.match(await page.locator("#apps").innerText(), /No custom apps yet/);
      // The configured MCP server: its command, transport and state (the agent's lookups tried to
      // list it; `true` cannot answer the handshake, so its error shows).
      const server = await page.locator('tr[data-server="notes"]').innerText();
      assert.match(server, /notes\s+true --notes\s+stdio\s+(failing|not listed yet)/);
      await page.screenshot({ path: join(shots, "5a-servers.png"), fullPage: true });
    });

    await t.test("a held call is approved on its page (client without elicitation) and runs once", async () => {
      const agent = await agentSession(env);
      try {
        const del = [{ tool: "vault_delete_secret", args: { name: "BROWSER_K" } }];
        await agent.run([{ tool: "vault_set_secret", args: { name: "BROWSER_K", value: "v-browser-0123", allowed_hosts: ["api.example.com"] } }]);
        const held = await agent.run(del);
        const err = held.results[0].error;
        assert.equal(err.code, "CONFIRMATION_REQUIRED");
        assert.match(err.approval_url, /^http:\/\/127\.0\.0\.1:\d+\/approve\/[0-9a-f]{32}$/);
        const res = await page.goto(err.approval_url);
        assert.equal(res.status(), 200);
        assert.match(await page.locator("h1").innerText(), /Approve vault_delete_secret/);
        assert.match(await page.locator("#arguments").innerText(), /BROWSER_K/);
        await page.screenshot({ path: join(shots, "5b-approval.png"), fullPage: true });
        await page.locator("#approve").click();
        await page.waitForLoadState();
        assert.match(await page.locator("#result").innerText(), /approved for one run/);
        const ran = await agent.run(del);
        assert.equal(ran.results[0].result.deleted, true, JSON.stringify(ran));
        await agent.run([{ tool: "vault_set_secret", args: { name: "BROWSER_K", value: "v-browser-0123", allowed_hosts: ["api.example.com"] } }]);
        const again = await agent.run(del);
        assert.equal(again.results[0].error.code, "CONFIRMATION_REQUIRED", "the approval was spent");
        assert.notEqual(again.results[0].error.approval_url, err.approval_url);
        await page.goto(again.results[0].error.approval_url);
        await page.locator("#deny").click();
        await page.waitForLoadState();
        assert.match(await page.locator("#result").innerText(), /was not run/);
        const denied = await agent.run(del);
        assert.equal(denied.results[0].error.code, "CONFIRMATION_REQUIRED", "denied: asked again, nothing run");
      } finally {
        await agent.close();
        await page.goto(url);
      }
    });

    await t.test("disconnects after confirming (cancelling keeps it)", async () => {
      await page.getByRole("link", { name: "Integrations" }).click();
      const disconnect = row("todoist").getByRole("button", { name: "Disconnect Todoist" });
      page.once("dialog", (d) => d.dismiss());
      await disconnect.click();
      await page.waitForTimeout(300);
      assert.equal(await row("todoist").getAttribute("data-state"), "stored", "cancelled: still connected");
      page.once("dialog", (d) => {
        assert.match(d.message(), /Disconnect Todoist\?/);
        d.accept();
      });
      await disconnect.click();
      await page.waitForURL(/done=disconnected/);
      assert.match(await page.locator(".notice.ok").innerText(), /Todoist is disconnected/);
      assert.equal(await row("todoist").getAttribute("data-state"), "none");
      await page.screenshot({ path: join(shots, "6-disconnected.png"), fullPage: true });
      await page.goto(`${url}audit?tool=connection_delete_credentials`);
      assert.equal(await page.locator("table.audit tbody tr").count(), 1, "the disconnect is audited");
    });

    assert.deepEqual(cspViolations, [], "the pages run under their CSP without violations");
    for (const html of pagesSeen) assert.equal(html.includes(GOOD) || html.includes(VAULT_VALUE), false);
  } finally {
    await context.close();
    const code = await portal.stop();
    fake.close();
    assert.equal(code, 0, "workbench portal exits cleanly when its input ends");
  }
  // The stopped portal answers nothing any more.
  await assert.rejects(fetch(url, { headers: { origin } }));
  // The data directory holds neither the token nor the vault value in the clear.
  for (const f of readdirSync(join(home, "data"))) {
    const p = join(home, "data", f);
    if (statSync(p).isFile()) {
      const bytes = readFileSync(p).toString("latin1");
      assert.equal(bytes.includes(GOOD) || bytes.includes(VAULT_VALUE), false, `${f} holds a secret`);
    }
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`portal browser test: ${seconds} s; screenshots in ${shots}`);
  rmSync(home, { recursive: true, force: true });
});
