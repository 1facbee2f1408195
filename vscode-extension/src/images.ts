// The images of a prompt from the panel, as darman.prompt's `images`
// takes them (docs/protocol.md): only well-formed entries go through;
// darman itself checks that each is an image it can send. And the bytes of
// the stored images a loaded session links to, for the panel to draw.
import type { HostMessage, PromptImage } from "../shared/protocol";

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

/** The types the panel shows, as darman stores them. */
const shown = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/**
 * fetchImage answers the webview's fetchImage: the bytes of an image
 * darman.session.load linked to, read with darman.session.image, or why
 * they cannot be shown. Only darman's own links are asked for, and only
 * an image of a type the panel shows is passed on.
 */
export async function fetchImage(
  server: { executeCommand(command: string, argument?: object): Promise<unknown> },
  uri: string,
  errorText: (err: unknown) => string,
): Promise<HostMessage & { type: "image" }> {
  if (typeof uri !== "string" || !uri.startsWith("darman-image:")) {
    return { type: "image", uri: String(uri), error: "not an image darman stored" };
  }
  try {
    const res = (await server.executeCommand("darman.session.image", { uri })) as { mimeType?: unknown; data?: unknown } | null;
    if (!res || typeof res.data !== "string" || res.data === "" || typeof res.mimeType !== "string" || !shown.has(res.mimeType)) {
      return { type: "image", uri, error: "darman answered without an image the panel can show" };
    }
    return { type: "image", uri, mimeType: res.mimeType, data: res.data };
  } catch (err) {
    const message = errorText(err);
    if (/darman\.session\.image|unknown command|-32601/i.test(message)) {
      return { type: "image", uri, error: "this darman cannot send stored images; update darman to see them" };
    }
    return { type: "image", uri, error: message };
  }
}
