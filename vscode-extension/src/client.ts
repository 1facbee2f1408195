// The language client's darman-specific parts, kept apart from activation so
// the tests can check them without a LanguageClient: the opt-ins darman's
// custom messages need, and what the server gets as configuration.

import type { ClientCapabilities, FeatureState, StaticFeature } from "vscode-languageclient";

/** The opt-ins of docs/protocol.md, all of which the extension handles. */
export const optIns = { sessionUpdates: true, requestPermission: true, applyEditAndSave: true, openDiff: true, elicitation: true };

/** A StaticFeature that declares capabilities.experimental.darman. */
export class DarmanOptIns implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    experimental.darman = { ...optIns };
    capabilities.experimental = experimental;
  }

  initialize(): void {}

  getState(): FeatureState {
    return { kind: "static" };
  }

  clear(): void {}
}

/**
 * configurationAnswer answers workspace/configuration items: the "darman"
 * section is the server's settings (without the extension's own keys);
 * anything else is left to VS Code.
 */
export function configurationAnswer(
  items: { section?: string }[],
  darman: () => Record<string, unknown>,
  other: (index: number) => unknown,
): unknown[] {
  return items.map((item, i) => (item.section === "darman" ? darman() : other(i)));
}
