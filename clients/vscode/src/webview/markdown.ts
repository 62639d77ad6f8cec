// Assistant text as sanitized HTML: markdown (marked), code highlighted (highlight.js),
// every code block with Copy and Insert buttons (codicons, shown on hover or focus).

import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/common";
import { Marked } from "marked";

import { settledEnd } from "./settled";

const marked = new Marked({ gfm: true, breaks: false, async: false });

export function renderMarkdown(target: HTMLElement, text: string): void {
  const html = marked.parse(text) as string;
  target.innerHTML = DOMPurify.sanitize(html);
  for (const code of Array.from(target.querySelectorAll("pre > code"))) {
    decorate(code as HTMLElement);
  }
}

interface Streamed {
  text: string;
  settled: number;
  settledBox: HTMLElement;
  tailBox: HTMLElement;
}

const streamed = new WeakMap<HTMLElement, Streamed>();

/** Markdown that grows as it streams: blocks that can no longer change (before a blank
 * line outside a code fence) are parsed once; each frame re-renders only the tail. */
export function renderStreamingMarkdown(target: HTMLElement, text: string): void {
  let state = streamed.get(target);
  if (!state || !text.startsWith(state.text.slice(0, state.settled))) {
    // First render, or the text was replaced (a retried attempt): start over.
    state = { text: "", settled: 0, settledBox: document.createElement("div"), tailBox: document.createElement("div") };
    target.replaceChildren(state.settledBox, state.tailBox);
    streamed.set(target, state);
  }
  const split = settledEnd(text, state.settled);
  if (split > state.settled) {
    const chunk = document.createElement("div");
    renderMarkdown(chunk, text.slice(state.settled, split));
    state.settledBox.append(...Array.from(chunk.childNodes));
    state.settled = split;
  }
  state.text = text;
  renderMarkdown(state.tailBox, text.slice(split));
}

function decorate(code: HTMLElement): void {
  const language = /language-([\w+-]+)/.exec(code.className)?.[1];
  const source = code.textContent;
  if (language && hljs.getLanguage(language)) {
    code.innerHTML = hljs.highlight(source, { language, ignoreIllegals: true }).value;
  } else if (source.length < 20_000) {
    code.innerHTML = hljs.highlightAuto(source).value;
  }
  code.classList.add("hljs");
  const bar = document.createElement("div");
  bar.className = "code-actions";
  for (const [label, action, iconName] of [
    ["Copy", "copy", "copy"],
    ["Insert at the cursor", "insertCode", "insert"],
  ] as const) {
    const button = document.createElement("button");
    button.className = "icon";
    button.title = label;
    button.setAttribute("aria-label", label);
    button.dataset.codeAction = action;
    const glyph = document.createElement("span");
    glyph.className = `codicon codicon-${iconName}`;
    glyph.setAttribute("aria-hidden", "true");
    button.append(glyph);
    bar.appendChild(button);
  }
  // The buttons sit on a frame around the block, so they stay put while it scrolls sideways.
  const pre = code.parentElement;
  if (!pre) return;
  const frame = document.createElement("div");
  frame.className = "code-block";
  pre.replaceWith(frame);
  frame.append(pre, bar);
}
