// sbp serve in a JavaScript test suite (Vitest, Jest): copy this file next to your tests
// (docs/SERVE.md, "Use it in your tests"). startSbp() starts `sbp serve` on free loopback
// ports with the management API over https, waits for its --ready-file and gives the
// connection strings, the certificate to trust, and the test API: advance(seconds),
// nextEvent(), reset(). SBP names the sbp binary (default: sbp on PATH).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, existsSync, rmSync, openSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function startSbp({ entities, sbp = process.env.SBP ?? "sbp" } = {}) {
  const folder = mkdtempSync(join(tmpdir(), "sbp-"));
  const readyFile = join(folder, "ready.json");
  const certificate = join(folder, "localhost.pem");
  const args = ["serve", ...(entities ? [entities] : []),
    "--amqp", "127.0.0.1:0", "--http", "127.0.0.1:0",
    "--admin-tls", "127.0.0.1:0", "--tls-cert", certificate,
    "--ready-file", readyFile, "--quiet",
    // It ends with this process however this one ends (its end closes the pipe).
    "--stop-with-stdin"];
  const log = openSync(join(folder, "sbp.log"), "w");
  const server = spawn(sbp, args, { stdio: ["pipe", log, log] });
  let failed = null;
  server.on("error", (e) => { failed = e; }); // not found, not executable
  const deadline = Date.now() + 30_000;
  while (!existsSync(readyFile)) {
    if (failed) throw new Error(`sbp serve did not start (${sbp}): ${failed.message}`);
    if (server.exitCode !== null || Date.now() > deadline) {
      throw new Error(`sbp serve did not start: ${readFileSync(join(folder, "sbp.log"), "utf8")}`);
    }
    await sleep(20);
  }
  const ready = JSON.parse(readFileSync(readyFile, "utf8"));
  const http = `http://${ready.listeners.http}`;
  const post = async (path) => {
    const response = await fetch(http + path, { method: "POST", headers: { "x-sbp-live": "1" } });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  return {
    connectionString: ready.connection_string,
    adminConnectionString: ready.admin_connection_string,
    // The admin client's own trust: new ServiceBusAdministrationClient(conn, { tlsOptions }).
    tlsOptions: { ca: readFileSync(certificate) },
    certificate,
    advance: (seconds) => post(`/live/clock?by=${Math.round(seconds * 1000)}`),
    nextEvent: () => post("/live/clock?next"),
    reset: () => post("/reset"),
    async stop() {
      server.kill("SIGTERM");
      await new Promise((r) => (server.exitCode !== null ? r() : server.once("exit", r)));
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
