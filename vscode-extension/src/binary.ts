// Finding the darman binary: the darman.path setting, then the binary a
// platform-specific VSIX bundles in bin/, then darman on PATH.

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export type BinarySource = "setting" | "bundled" | "PATH";

export type Lookup = {
  /** darman.path as the user wrote it ("" when unset). */
  configured: string;
  /** Where a relative darman.path is resolved: the first workspace folder. */
  workspaceFolder?: string;
  /** The extension's own directory, which holds bin/ in a platform VSIX. */
  extensionPath: string;
  /** The PATH to search (process.env.PATH). */
  envPath: string;
  platform?: NodeJS.Platform;
  /** Whether a file exists and may be run; fs.accessSync(X_OK) by default. */
  isExecutable?: (file: string) => boolean;
};

export type Found = { path: string; source: BinarySource };

/** Why no binary was found, in words for an error message. */
export class NotFoundError extends Error {
  constructor(
    message: string,
    readonly searched: string[],
  ) {
    super(message);
    this.name = "NotFoundError";
  }
}

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * findDarman returns the binary to start. A darman.path that names nothing
 * runnable is an error, not a reason to fall back: the user asked for that
 * binary, and silently running another would hide the mistake.
 */
export function findDarman(l: Lookup): Found {
  const platform = l.platform ?? process.platform;
  const isExecutable = l.isExecutable ?? executable;
  const exe = platform === "win32" ? "darman.exe" : "darman";
  const configured = l.configured.trim();
  if (configured !== "") {
    let file = configured;
    if (file === "~" || file.startsWith("~/")) {
      file = path.join(os.homedir(), file.slice(1));
    }
    if (!path.isAbsolute(file) && l.workspaceFolder) {
      file = path.resolve(l.workspaceFolder, file);
    }
    if (isExecutable(file)) {
      return { path: file, source: "setting" };
    }
    throw new NotFoundError(
      `The darman.path setting names ${file}, which is not an executable file. Fix the setting, or clear it to use the bundled darman or the one on PATH.`,
      [file],
    );
  }
  const bundled = path.join(l.extensionPath, "bin", exe);
  if (isExecutable(bundled)) {
    return { path: bundled, source: "bundled" };
  }
  const searched = [bundled];
  const sep = platform === "win32" ? ";" : ":";
  for (const dir of l.envPath.split(sep)) {
    if (dir === "") {
      continue;
    }
    const file = path.join(dir, exe);
    searched.push(file);
    if (isExecutable(file)) {
      return { path: file, source: "PATH" };
    }
  }
  throw new NotFoundError(
    "darman is not installed: this extension has no bundled binary and there is no darman on PATH. Install darman, or set darman.path to its binary.",
    searched,
  );
}
