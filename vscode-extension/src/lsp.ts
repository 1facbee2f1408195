// vscode-languageclient, bundled on its own as dist/lsp.js: it is most of
// the extension's code, and extension.js requires it only once activate()
// has returned, so VS Code does not wait for it to load.
export {
  CancellationToken,
  DidChangeConfigurationNotification,
  LanguageClient,
  State,
  Trace,
  TransportKind,
} from "vscode-languageclient/node";
