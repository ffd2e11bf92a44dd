// Resolves an unpacked bundle's mcp_config the way Claude Desktop does, with the official
// library's own function (getMcpConfigForManifest of @anthropic-ai/mcpb): platform_overrides for
// this OS, `${__dirname}` = the bundle's folder, `${HOME}` and the other system folders, and
// `${user_config.KEY}` from the user's settings over the manifest's defaults.
//
// node mcpb_config.mjs MCPB_PACKAGE_DIR UNPACKED_DIR USER_CONFIG_JSON
// Prints {"command", "args", "env"} as JSON; exits 3 when the manifest's required settings are
// missing (the client would not start the server).
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, sep } from "node:path";
import { pathToFileURL } from "node:url";

const [pkg, dir, userJson] = process.argv.slice(2);
const { getMcpConfigForManifest } = await import(pathToFileURL(join(pkg, "dist", "index.js")).href);
const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
const home = process.env.HOME || homedir();
const config = await getMcpConfigForManifest({
  manifest,
  extensionPath: dir,
  systemDirs: { HOME: home, DESKTOP: join(home, "Desktop"), DOCUMENTS: join(home, "Documents"), DOWNLOADS: join(home, "Downloads") },
  userConfig: JSON.parse(userJson),
  pathSeparator: sep,
  logger: { warn: (m) => console.error(m), error: (m) => console.error(m), log: () => {} },
});
if (!config) {
  console.error("mcpb_config: the client would not start this server (required settings missing)");
  process.exit(3);
}
const { command, args = [], env = {} } = config;
process.stdout.write(JSON.stringify({ command, args, env }) + "\n");
