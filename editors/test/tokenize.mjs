// Tokenises exp files with the TextMate grammar of the VS Code extension,
// using VS Code's own TextMate engine (vscode-textmate on the Oniguruma
// regex library compiled to WebAssembly), and reports every unmatched region:
//   - text (other than whitespace) that no rule of the grammar matched, and
//   - a region (string, block comment) still open at the end of a file.
//
//   node test/tokenize.mjs FILE_OR_FOLDER...
//
// Folders are searched for *.exp files. Prints one JSON object
// ({files, lines, tokens, problems}) and exits 1 when there are problems.

import { readFileSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const textmate = require("vscode-textmate");
const oniguruma = require("vscode-oniguruma");

const here = path.dirname(fileURLToPath(import.meta.url));
const grammarPath = path.join(here, "..", "vscode", "syntaxes", "exp.tmLanguage.json");

function expFiles(target) {
  if (!statSync(target).isDirectory()) {
    return [target];
  }
  return readdirSync(target)
    .sort()
    .flatMap((entry) => {
      const full = path.join(target, entry);
      if (statSync(full).isDirectory()) return expFiles(full);
      return full.endsWith(".exp") ? [full] : [];
    });
}

async function loadGrammar() {
  const wasm = readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (text) => new oniguruma.OnigString(text),
    }),
    loadGrammar: async (scopeName) => {
      if (scopeName !== "source.exp") return null;
      return textmate.parseRawGrammar(readFileSync(grammarPath, "utf8"), grammarPath);
    },
  });
  return registry.loadGrammar("source.exp");
}

// A file whose expected diagnostics (`// expect:` in tests/ui) include a
// syntax error (E01xx) may hold characters no rule of the language matches;
// they are marked invalid, as an editor shows them. Anywhere else an
// invalid mark is a gap in the grammar.
function expectsSyntaxErrors(text) {
  return /^\/\/ expect:.*\bE01\d\d\b/m.test(text);
}

function check(grammar, file, summary) {
  const text = readFileSync(file, "utf8");
  const invalidAllowed = expectsSyntaxErrors(text);
  const lines = text.split(/\r?\n/);
  let stack = textmate.INITIAL;
  lines.forEach((line, number) => {
    const result = grammar.tokenizeLine(line, stack);
    for (const token of result.tokens) {
      const text = line.slice(token.startIndex, token.endIndex);
      summary.tokens += 1;
      // Only the file's own scope: no rule matched this text.
      if (token.scopes.length === 1 && text.trim() !== "") {
        summary.problems.push(`${file}:${number + 1}:${token.startIndex + 1}: unmatched text ${JSON.stringify(text)}`);
      } else if (!invalidAllowed && token.scopes.some((s) => s.startsWith("invalid."))) {
        summary.problems.push(`${file}:${number + 1}:${token.startIndex + 1}: marked invalid ${JSON.stringify(text)}`);
      }
    }
    stack = result.ruleStack;
  });
  summary.lines += lines.length;
  if (stack.depth > 1) {
    summary.problems.push(`${file}: a region is still open at the end of the file`);
  }
}

const targets = process.argv.slice(2);
if (targets.length === 0) {
  console.error("usage: node test/tokenize.mjs FILE_OR_FOLDER...");
  process.exit(2);
}
const grammar = await loadGrammar();
const summary = { files: 0, lines: 0, tokens: 0, problems: [] };
for (const file of targets.flatMap(expFiles)) {
  summary.files += 1;
  check(grammar, file, summary);
}
console.log(JSON.stringify(summary, null, 2));
process.exit(summary.problems.length === 0 ? 0 : 1);
