import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { findDarman, NotFoundError } from "../src/binary";

/** A directory with runnable (mode 755) and plain files at the given paths. */
function tree(files: Record<string, "exe" | "file">): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "darman-bin-"));
  for (const [rel, kind] of Object.entries(files)) {
    const p = path.join(root, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, "#!/bin/sh\n");
    fs.chmodSync(p, kind === "exe" ? 0o755 : 0o644);
  }
  return root;
}

test("the darman.path setting comes first, even with a bundled binary and one on PATH", () => {
  const r = tree({ "custom/darman-dev": "exe", "ext/bin/darman": "exe", "path1/darman": "exe" });
  const found = findDarman({
    configured: path.join(r, "custom/darman-dev"),
    extensionPath: path.join(r, "ext"),
    envPath: path.join(r, "path1"),
  });
  assert.deepEqual(found, { path: path.join(r, "custom/darman-dev"), source: "setting" });
});

test("a relative darman.path is resolved against the workspace folder", () => {
  const r = tree({ "ws/tools/darman": "exe" });
  const found = findDarman({ configured: "tools/darman", workspaceFolder: path.join(r, "ws"), extensionPath: r, envPath: "" });
  assert.equal(found.path, path.join(r, "ws/tools/darman"));
});

test("a darman.path that is not runnable is an error naming it, with no fallback to PATH", () => {
  const r = tree({ "plain/darman": "file", "path1/darman": "exe" });
  assert.throws(
    () => findDarman({ configured: path.join(r, "plain/darman"), extensionPath: r, envPath: path.join(r, "path1") }),
    (err: unknown) => {
      assert.ok(err instanceof NotFoundError);
      assert.match(err.message, /darman\.path setting names .*plain\/darman, which is not an executable file/);
      return true;
    },
  );
});

test("the bundled bin/darman comes before PATH", () => {
  const r = tree({ "ext/bin/darman": "exe", "path1/darman": "exe" });
  const found = findDarman({ configured: "", extensionPath: path.join(r, "ext"), envPath: path.join(r, "path1") });
  assert.deepEqual(found, { path: path.join(r, "ext/bin/darman"), source: "bundled" });
});

test("PATH is searched in order, skipping files that cannot run", () => {
  const r = tree({ "a/darman": "file", "b/darman": "exe", "c/darman": "exe" });
  const envPath = ["", path.join(r, "a"), path.join(r, "missing"), path.join(r, "b"), path.join(r, "c")].join(":");
  const found = findDarman({ configured: "  ", extensionPath: path.join(r, "ext"), envPath });
  assert.deepEqual(found, { path: path.join(r, "b/darman"), source: "PATH" });
});

test("nothing found: an error that says what to do and lists where it looked", () => {
  const r = tree({ "a/darman": "file" });
  assert.throws(
    () => findDarman({ configured: "", extensionPath: path.join(r, "ext"), envPath: path.join(r, "a") }),
    (err: unknown) => {
      assert.ok(err instanceof NotFoundError);
      assert.match(err.message, /Install darman, or set darman\.path/);
      assert.deepEqual(err.searched, [path.join(r, "ext/bin/darman"), path.join(r, "a/darman")]);
      return true;
    },
  );
});

test("on Windows the binary is darman.exe", () => {
  const seen: string[] = [];
  const found = findDarman({
    configured: "",
    extensionPath: "/ext",
    envPath: "/x;/y",
    platform: "win32",
    isExecutable: (f) => (seen.push(f), f === path.join("/y", "darman.exe")),
  });
  assert.equal(found.source, "PATH");
  assert.deepEqual(seen, [path.join("/ext", "bin", "darman.exe"), path.join("/x", "darman.exe"), path.join("/y", "darman.exe")]);
});
