// The chat webview's entry point: the host's page holds <div id="app"> and
// this bundle; everything else is built here.
import "./api";
import { App } from "./app";

const root = document.getElementById("app") ?? document.body.appendChild(document.createElement("div"));
new App(root, acquireVsCodeApi());
