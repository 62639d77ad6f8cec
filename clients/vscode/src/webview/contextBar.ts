// /context drawn as a picture: one bar the width of the window, a segment per part (system
// prompt, tools, MCP tools, memory, skills, messages, free space) as wide as its share,
// and a legend with each part's tokens and percent.

import { type ContextReport, partSlug } from "../contextReport";
import { element } from "./dom";

export function drawContext(report: ContextReport): HTMLElement[] {
  const title = element("div", "context-title", `Context · ${report.model} · ${report.used.toLocaleString("en-US")} of ${report.window.toLocaleString("en-US")} tokens`);
  const bar = element("div", "context-bar");
  bar.setAttribute("role", "img");
  bar.setAttribute("aria-label", report.parts.map((p) => `${p.name} ${p.percent}%`).join(", "));
  const legend = element("table", "context-legend");
  for (const part of report.parts) {
    const slug = partSlug(part.name);
    if (part.tokens > 0) {
      const segment = element("div", `segment ${slug}`);
      // At least a sliver, so a small part is still seen.
      segment.style.flexGrow = String(Math.max(part.percent, 0.4));
      segment.title = `${part.name}: ${part.tokens.toLocaleString("en-US")} tokens (${part.percent}%)`;
      segment.dataset.part = slug;
      bar.append(segment);
    }
    const row = element("tr", "");
    row.dataset.part = slug;
    const swatch = element("td", "");
    swatch.append(element("span", `swatch ${slug}`));
    // The name and its count each keep to one line; the cell breaks between them.
    const name = element("td", "part-name");
    name.append(element("span", "", part.name));
    if (part.detail && part.tokens > 0) name.append(" ", element("span", "part-detail", `(${part.detail})`));
    row.append(
      swatch,
      name,
      element("td", "tokens", part.tokens.toLocaleString("en-US")),
      element("td", "percent", `${part.percent.toFixed(1)}%`),
    );
    legend.append(row);
  }
  return [title, bar, legend];
}
