// The syntax highlighter, a bundle of its own (dist/highlight.js, built by
// build.mjs) that the panel loads the first time an answer has a code
// block (highlight.ts): Shiki with its JavaScript regex engine (no
// WebAssembly, which the CSP would refuse), VS Code's own Light+ and Dark+
// themes and the grammars of the languages answers use most. It puts its
// API on window.darmanHighlight, a promise.
import { createHighlighterCore } from "shiki/core";
import { createJavaScriptRegexEngine } from "shiki/engine/javascript";
import lightPlus from "@shikijs/themes/light-plus";
import darkPlus from "@shikijs/themes/dark-plus";
import lightHC from "@shikijs/themes/github-light-high-contrast";
import darkHC from "@shikijs/themes/github-dark-high-contrast";
import go from "@shikijs/langs/go";
import typescript from "@shikijs/langs/typescript";
import javascript from "@shikijs/langs/javascript";
import tsx from "@shikijs/langs/tsx";
import json from "@shikijs/langs/json";
import jsonc from "@shikijs/langs/jsonc";
import python from "@shikijs/langs/python";
import shellscript from "@shikijs/langs/shellscript";
import rust from "@shikijs/langs/rust";
import yaml from "@shikijs/langs/yaml";
import css from "@shikijs/langs/css";
import diff from "@shikijs/langs/diff";
import sql from "@shikijs/langs/sql";
import c from "@shikijs/langs/c";
import java from "@shikijs/langs/java";
import toml from "@shikijs/langs/toml";
import dockerfile from "@shikijs/langs/dockerfile";
import make from "@shikijs/langs/make";
import lua from "@shikijs/langs/lua";
import type { HighlightApi } from "./highlight";

const api: Promise<HighlightApi> = createHighlighterCore({
  themes: [lightPlus, darkPlus, lightHC, darkHC],
  langs: [go, typescript, javascript, tsx, json, jsonc, python, shellscript, rust, yaml, css, diff, sql, c, java, toml, dockerfile, make, lua],
  engine: createJavaScriptRegexEngine(),
}).then((hl) => {
  const known = new Set(hl.getLoadedLanguages());
  return {
    has: (lang: string) => known.has(lang),
    tokens: (code: string, lang: string, theme: string) =>
      hl.codeToTokensBase(code, { lang, theme }).map((line) => line.map((t) => ({ content: t.content, color: t.color, fontStyle: t.fontStyle }))),
  };
});

(window as unknown as { darmanHighlight: Promise<HighlightApi> }).darmanHighlight = api;
