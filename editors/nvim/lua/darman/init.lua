-- The darman plugin's module: `require("darman")` finds this file when
-- editors/nvim is on 'runtimepath' (a plugin manager's directory, a
-- native package, or `set rtp+=`; see docs/editors.md). The helper itself is
-- ../../darman.lua, the file older configurations load from package.path;
-- both names give the one module, since require caches it as "darman".
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)[/\\]lua[/\\]darman[/\\]init%.lua$")
return dofile(here .. "/darman.lua")
