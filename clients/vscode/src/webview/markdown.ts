// Assistant text as sanitized HTML: markdown (marked), code highlighted (highlight.js),
// every code block with Copy and Insert buttons.

import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/common";
import { Marked } from "marked";

const marked = new Marked({ gfm: true, breaks: false, async: false });

export function renderMarkdown(target: HTMLElement, text: string): void {
  const html = marked.parse(text) as string;
  target.innerHTML = DOMPurify.sanitize(html);
  for (const code of Array.from(target.querySelectorAll("pre > code"))) {
    decorate(code as HTMLElement);
  }
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
  for (const [label, action] of [
    ["Copy", "copy"],
    ["Insert", "insertCode"],
  ] as const) {
    const button = document.createElement("button");
    button.textContent = label;
    button.dataset.codeAction = action;
    bar.appendChild(button);
  }
  code.parentElement?.insertBefore(bar, code);
}
