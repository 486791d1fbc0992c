// Starts `expc lsp` for exp files. Everything else the extension declares in
// package.json (the language, its TextMate grammar, the server's path).
"use strict";

const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("exp").get("server.path", "expc");
  const server = { command, args: ["lsp"] };
  client = new LanguageClient(
    "exp",
    "exp language server",
    { run: server, debug: server },
    { documentSelector: [{ language: "exp" }] },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
