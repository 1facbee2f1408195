// The images of a prompt from the panel, as darman.prompt's `images`
// takes them (docs/protocol.md): only well-formed entries go through;
// darman itself checks that each is an image it can send.
import type { PromptImage } from "../shared/protocol";

export type ImageArg = { type: "image"; mimeType: string; data: string; name?: string };

export function imageArgs(images: PromptImage[] | undefined): ImageArg[] | undefined {
  if (!Array.isArray(images)) return undefined;
  const out: ImageArg[] = [];
  for (const img of images) {
    if (!img || typeof img.data !== "string" || typeof img.mimeType !== "string" || img.data === "") continue;
    const arg: ImageArg = { type: "image", mimeType: img.mimeType, data: img.data };
    if (typeof img.name === "string" && img.name) arg.name = img.name;
    out.push(arg);
  }
  return out.length ? out : undefined;
}
