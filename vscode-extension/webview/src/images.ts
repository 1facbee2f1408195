// Images pasted or dropped on the prompt box: each is read as a data URL,
// shown as a thumbnail above the box with a remove button, and sent with
// the prompt as {mimeType, data (base64), name}. darman checks, scales
// and stores them; the panel only refuses what darman would never take
// (another type, a file over maxBytes) and says so.
import type { PromptImage } from "../../shared/protocol";
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
        return h(
          "span",
          { class: "image-thumb", role: "listitem", title: label },
          h("img", { src: `data:${img.mimeType};base64,${img.data}`, alt: label }),
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
