// node --import ./register.mjs: lets @modelcontextprotocol/conformance
// 0.1.16 run on Node 20 (the tests of darman mcp and of its MCP client
// use it; see hooks.mjs).
import { register } from 'node:module';
register('./hooks.mjs', import.meta.url);
