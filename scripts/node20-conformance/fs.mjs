// node:fs plus a globSync for Node 20: the MCP conformance suite imports
// fs.globSync (Node 22), which only its tier-check command calls.
import * as fs from 'node:fs';
export * from 'node:fs';
export default fs.default;
export function globSync(...args) {
  if (fs.globSync) return fs.globSync(...args);
  throw new Error('fs.globSync needs Node 22');
}
