// Images pasted or dropped on the prompt box: each is read as a data URL,
// shown as a thumbnail above the box with a remove button, and sent with
// the prompt as {mimeType, data (base64), name}. darman checks, scales
// and stores them; the panel only refuses what darman would never take
// (another type, a file over maxBytes) and says so.
import type { PromptImage, WebviewMessage } from "../../shared/protocol";
import { button, h } from "./dom";
import { icon } from "./icons";

const types = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const maxBytes = 20 << 20;
const maxImages = 10;

export class ImageTray {
  readonly el: HTMLElement;
  private images: PromptImage[] = [];

  constructor(
    private changed: () => void,
    private refuse: (why: string) => void,
  ) {
    this.el = h("div", { class: "image-tray", role: "list", "aria-label": "Images sent with the prompt", hidden: true });
  }

  // watch takes images pasted into, or dropped on, target.
  watch(target: HTMLElement): void {
    target.addEventListener("paste", (ev: ClipboardEvent) => {
      const files = imageFiles(ev.clipboardData);
      if (files.length === 0) return; // text pastes as usual
      ev.preventDefault();
      void this.add(files);
    });
    target.addEventListener("dragover", (ev: DragEvent) => {
      if (ev.dataTransfer?.types.includes("Files")) ev.preventDefault();
    });
    target.addEventListener("drop", (ev: DragEvent) => {
      const files = imageFiles(ev.dataTransfer);
      if (files.length === 0) return;
      ev.preventDefault();
      void this.add(files);
    });
  }

  get count(): number {
    return this.images.length;
  }

  // take returns the images and empties the tray.
  take(): PromptImage[] {
    const out = this.images;
    this.images = [];
    this.render();
    return out;
  }

  // restore puts images taken for a prompt darman did not take back,
  // before any added since.
  restore(images: PromptImage[]): void {
    this.images = [...images, ...this.images].slice(0, maxImages);
    this.render();
    this.changed();
  }

  async add(files: File[]): Promise<void> {
    for (const f of files) {
      if (!types.has(f.type)) {
        this.refuse(`${f.name || "The image"} is ${f.type || "of an unknown type"}: darman takes PNG, JPEG, GIF and WebP images.`);
        continue;
      }
      if (f.size > maxBytes) {
        this.refuse(`${f.name || "The image"} is ${Math.round(f.size / (1 << 20))} MiB: darman takes images up to ${maxBytes >> 20} MiB.`);
        continue;
      }
      if (this.images.length >= maxImages) {
        this.refuse(`A prompt takes up to ${maxImages} images.`);
        break;
      }
      const url = await dataURL(f);
      const comma = url.indexOf(",");
      if (comma < 0) continue;
      this.images.push({ mimeType: f.type, data: url.slice(comma + 1), name: f.name || undefined });
    }
    this.render();
    this.changed();
  }

  private remove(i: number): void {
    this.images.splice(i, 1);
    this.render();
    this.changed();
  }

  private render(): void {
    this.el.replaceChildren(
      ...this.images.map((img, i) => {
        const label = img.name || `image ${i + 1}`;
        const url = `data:${img.mimeType};base64,${img.data}`;
        const pic = h("img", { src: url, alt: label });
        pic.addEventListener("click", () => openViewer(url, label));
        return h(
          "span",
          { class: "image-thumb", role: "listitem", title: label },
          pic,
          button(`Remove ${label}`, { class: "chip-remove image-remove" }, () => this.remove(i), icon("close")),
        );
      }),
    );
    this.el.hidden = this.images.length === 0;
  }
}

function imageFiles(dt: DataTransfer | null): File[] {
  if (!dt) return [];
  const out: File[] = [];
  for (const item of Array.from(dt.items ?? [])) {
    if (item.kind !== "file") continue;
    const f = item.getAsFile();
    if (f && f.type.startsWith("image/")) out.push(f);
  }
  if (out.length === 0) {
    for (const f of Array.from(dt.files ?? [])) if (f.type.startsWith("image/")) out.push(f);
  }
  return out;
}

function dataURL(f: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result));
    r.onerror = () => reject(r.error);
    r.readAsDataURL(f);
  });
}

// ---- images of the user's messages in the stream ----

// An image of a user's message as the transcript keeps it: a reference,
// never the bytes (they would bloat the saved state). uri is darman's
// link to the stored image (darman-image:…), which the live turn's user
// message and darman.session.load's replay both send.
export type ImageRef = { uri: string; label: string; title?: string };

// imageRefOf reads a user_message_chunk's content as an image reference:
// a resource_link to an image. null for anything else.
export function imageRefOf(content: unknown): ImageRef | null {
  if (!content || typeof content !== "object") return null;
  const c = content as { type?: unknown; uri?: unknown; name?: unknown; mimeType?: unknown; text?: unknown };
  if (c.type !== "resource_link" || typeof c.uri !== "string" || !c.uri) return null;
  const image = c.uri.startsWith("darman-image:") || (typeof c.mimeType === "string" && c.mimeType.startsWith("image/"));
  if (!image) return null;
  const ref: ImageRef = { uri: c.uri, label: typeof c.name === "string" && c.name ? c.name : "image" };
  if (typeof c.text === "string" && c.text) ref.title = c.text;
  return ref;
}

// How many images' bytes (as data: URLs) the panel keeps at once, and
// how much of them; the least recently kept go first, and are asked for
// again if shown again.
const keptImages = 48;
const keptChars = 64 << 20;

type Post = (m: WebviewMessage) => void;

// Pictures draws the images of the user's messages, live or replayed
// alike. It keeps their bytes as data: URLs (the webview's CSP allows
// images from data: and nothing remote), asks the host for a stored
// image's bytes the first time one is shown (fetchImage, answered by an
// image message), and opens one full size on click.
export class Pictures {
  private urls = new Map<string, string>();
  private chars = 0;
  private failed = new Map<string, string>();
  private asked = new Set<string>();
  private waiting = new Map<string, Set<HTMLImageElement>>();

  constructor(private post: Post) {}

  // received takes the host's answer to fetchImage.
  received(m: { uri: string; mimeType?: string; data?: string; error?: string }): void {
    if (typeof m.uri !== "string") return;
    this.asked.delete(m.uri);
    const imgs = this.waiting.get(m.uri) ?? new Set<HTMLImageElement>();
    this.waiting.delete(m.uri);
    if (typeof m.data !== "string" || !m.data || typeof m.mimeType !== "string" || !types.has(m.mimeType)) {
      const why = m.error || "darman sent no image";
      this.failed.set(m.uri, why);
      for (const img of imgs) unavailable(img, why);
      return;
    }
    const url = `data:${m.mimeType};base64,${m.data}`;
    this.remember(m.uri, url);
    for (const img of imgs) if (img.isConnected) img.src = url;
  }

  // strip renders a message's images as thumbnails, each a button that
  // opens it full size.
  strip(refs: ImageRef[]): HTMLElement {
    return h("div", { class: "message-images" }, ...refs.map((r) => this.thumb(r)));
  }

  private thumb(ref: ImageRef): HTMLElement {
    const img = h("img", { alt: ref.label, decoding: "async" });
    const b = button(`Open ${ref.label} full size`, { class: "message-image" }, () => this.open(ref, img), img);
    if (ref.title) b.title = ref.title;
    const url = this.urls.get(ref.uri);
    const why = this.failed.get(ref.uri);
    if (url) {
      img.src = url;
    } else if (why) {
      unavailable(img, why);
    } else if (ref.uri.startsWith("darman-image:")) {
      let w = this.waiting.get(ref.uri);
      if (!w) this.waiting.set(ref.uri, (w = new Set()));
      w.add(img);
      if (!this.asked.has(ref.uri)) {
        this.asked.add(ref.uri);
        this.post({ type: "fetchImage", uri: ref.uri });
      }
    } else {
      unavailable(img, "its bytes are no longer in the panel; open the session again to see it");
    }
    return b;
  }

  private open(ref: ImageRef, thumb: HTMLImageElement): void {
    const url = this.urls.get(ref.uri) ?? (thumb.src.startsWith("data:") ? thumb.src : "");
    if (!url) return;
    openViewer(url, ref.label);
  }

  private remember(uri: string, url: string): void {
    this.forget(uri);
    this.urls.set(uri, url);
    this.chars += url.length;
    this.failed.delete(uri);
    while (this.urls.size > 1 && (this.urls.size > keptImages || this.chars > keptChars)) {
      this.forget(this.urls.keys().next().value as string);
    }
  }

  private forget(uri: string): void {
    const url = this.urls.get(uri);
    if (url === undefined) return;
    this.chars -= url.length;
    this.urls.delete(uri);
  }
}

function unavailable(img: HTMLImageElement, why: string): void {
  img.removeAttribute("src");
  const b = img.closest(".message-image");
  b?.classList.add("unavailable");
  b?.setAttribute("title", `${img.alt}: ${why}`);
  b?.setAttribute("aria-label", `${img.alt}: ${why}`);
}

// openViewer shows an image full size over the panel; a click on it, the
// close button or Escape closes it, and focus goes back where it was.
export function openViewer(url: string, label: string): void {
  document.querySelector(".image-viewer")?.remove();
  const back = document.activeElement as HTMLElement | null;
  const close = () => {
    viewer.remove();
    document.removeEventListener("keydown", onKey, true);
    back?.focus?.();
  };
  const onKey = (ev: KeyboardEvent) => {
    if (ev.key === "Escape") {
      ev.preventDefault();
      ev.stopPropagation();
      close();
    }
  };
  const shut = button(`Close ${label}`, { class: "icon-button image-viewer-close" }, close, icon("close"));
  const viewer = h("div", { class: "image-viewer", role: "dialog", "aria-modal": "true", "aria-label": label }, shut, h("img", { src: url, alt: label }));
  viewer.addEventListener("click", (ev) => {
    if (ev.target === viewer || (ev.target as Element).tagName === "IMG") close();
  });
  document.addEventListener("keydown", onKey, true);
  document.body.append(viewer);
  shut.focus();
}
