// The darman.* settings: which belong to the extension and which go to the
// server as configuration (initializationOptions.darman and
// workspace/didChangeConfiguration's settings.darman).

/**
 * Settings the extension reads itself; every other darman.* key is darman's.
 * inlineSuggest: whether VS Code asks darman for inline completions
 * (src/completion.ts); openProposedDiff: whether an edit's question opens
 * its diff (src/chat.ts).
 */
export const clientOnlyKeys = new Set(["path", "trace", "inlineSuggest", "openProposedDiff"]);

/** The part of vscode.WorkspaceConfiguration that settings are read with. */
export type ConfigSection = {
  inspect<T>(key: string):
    | {
        globalValue?: T;
        workspaceValue?: T;
        workspaceFolderValue?: T;
        globalLanguageValue?: T;
        workspaceLanguageValue?: T;
        workspaceFolderLanguageValue?: T;
      }
    | undefined;
};

/**
 * serverSettings returns the darman.* settings the user set (in the user,
 * workspace or folder settings; the narrowest wins), without the
 * extension's own keys and without VS Code's defaults: a declared setting
 * left at its default would otherwise override darman.json. darman.model
 * is passed as "model" only when it is not empty.
 */
export function serverSettings(section: ConfigSection & object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(section)) {
    if (clientOnlyKeys.has(key)) {
      continue;
    }
    const value = (section as Record<string, unknown>)[key];
    if (typeof value === "function") {
      continue; // get, has, inspect, update
    }
    const i = section.inspect<unknown>(key);
    const set = i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue;
    if (set === undefined || set === null) {
      continue;
    }
    if (key === "model" && set === "") {
      continue;
    }
    out[key] = set;
  }
  return out;
}

/**
 * SettingsSync keeps darman's configuration in step with VS Code's: the
 * settings go in initialize, and after a change of darman.* settings they
 * are sent again (workspace/didChangeConfiguration) only if what darman
 * gets changed — darman starts a new agent for new settings, so a change to
 * darman.path or darman.trace.server alone must not reach it.
 */
export class SettingsSync {
  private sent = "";

  constructor(
    private readonly read: () => Record<string, unknown>,
    private readonly send: (settings: Record<string, unknown>) => void,
  ) {}

  /** The settings for initializationOptions.darman. */
  initial(): Record<string, unknown> {
    const s = this.read();
    this.sent = JSON.stringify(s);
    return s;
  }

  /** Call after a darman.* change; reports whether the settings were sent. */
  changed(): boolean {
    const s = this.read();
    const text = JSON.stringify(s);
    if (text === this.sent) {
      return false;
    }
    this.sent = text;
    this.send(s);
    return true;
  }
}
