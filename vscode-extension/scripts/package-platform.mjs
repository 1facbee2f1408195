// Builds a platform-specific VSIX: darman built by `go build` for the
// target goes into bin/, which the extension runs when darman.path is not
// set (before looking on PATH). Usage:
//
//   node scripts/package-platform.mjs [TARGET]
//
// TARGET is a VS Code platform (linux-x64, linux-arm64, darwin-x64,
// darwin-arm64, win32-x64, win32-arm64, alpine-x64, alpine-arm64); the
// default is this machine's. Writes darman-TARGET.vsix, or VSIX_OUT.
// With DARMAN_BINARY set (make release does), that binary goes in instead
// of one built here; it must be the target's.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const repo = path.dirname(here);

const targets = {
  "linux-x64": ["linux", "amd64"],
  "linux-arm64": ["linux", "arm64"],
  "alpine-x64": ["linux", "amd64"],
  "alpine-arm64": ["linux", "arm64"],
  "darwin-x64": ["darwin", "amd64"],
  "darwin-arm64": ["darwin", "arm64"],
  "win32-x64": ["windows", "amd64"],
  "win32-arm64": ["windows", "arm64"],
};

const target = process.argv[2] ?? `${process.platform}-${process.arch}`;
if (!targets[target]) {
  console.error(`package-platform: unknown target ${target}; use one of ${Object.keys(targets).join(", ")}`);
  process.exit(2);
}
const [goos, goarch] = targets[target];
const git = (...args) => {
  try {
    return execFileSync("git", args, { cwd: repo, encoding: "utf8" }).trim();
  } catch {
    return "";
  }
};
const out = process.env.VSIX_OUT || `darman-${target}.vsix`;
const bin = path.join(here, "bin");
rmSync(bin, { recursive: true, force: true });
mkdirSync(bin);
const exe = path.join(bin, goos === "windows" ? "darman.exe" : "darman");
if (process.env.DARMAN_BINARY) {
  copyFileSync(process.env.DARMAN_BINARY, exe);
  chmodSync(exe, 0o755);
} else {
  const version = git("describe", "--tags", "--always", "--dirty") || "dev";
  const commit = git("rev-parse", "HEAD");
  execFileSync(
    "go",
    ["build", "-trimpath", "-ldflags", `-s -w -X main.version=${version} -X main.commit=${commit}`, "-o", exe, "./cmd/darman"],
    { cwd: repo, stdio: "inherit", env: { ...process.env, GOOS: goos, GOARCH: goarch, CGO_ENABLED: "0" } },
  );
}
try {
  execFileSync("node", ["esbuild.mjs", "--minify"], { cwd: here, stdio: "inherit" });
  execFileSync(
    process.execPath,
    [path.join(repo, "node_modules", "@vscode", "vsce", "vsce"), "package", "--no-dependencies", "--target", target, "--out", out],
    { cwd: here, stdio: "inherit" },
  );
} finally {
  // The plain VSIX must not pick the binary up.
  rmSync(bin, { recursive: true, force: true });
}
