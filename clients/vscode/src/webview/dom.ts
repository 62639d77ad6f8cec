// Small DOM builders the panel's views share: elements, codicons, and buttons in the
// theme's weights (primary, secondary, a quiet link-like one, icon-only).

export function element(tag: string, className: string, text?: string): HTMLElement {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A codicon (the font VS Code draws its own icons with), hidden from screen readers. */
export function icon(name: string, extra = ""): HTMLElement {
  const node = element("span", `codicon codicon-${name}${extra ? ` ${extra}` : ""}`);
  node.setAttribute("aria-hidden", "true");
  return node;
}

export type ButtonWeight = "primary" | "secondary" | "quiet" | "icon";

export interface ButtonSpec {
  label: string;
  onClick: () => void;
  weight?: ButtonWeight;
  /** A codicon name shown before the label (or alone, for an icon button). */
  icon?: string;
  /** The key that does the same, shown in the button and its tooltip. */
  key?: string;
  title?: string;
}

export function button(spec: ButtonSpec | string, onClick?: () => void): HTMLButtonElement {
  const { label, weight = "secondary", icon: iconName, key, title } = typeof spec === "string" ? { label: spec } : spec;
  const handler = typeof spec === "string" ? onClick : spec.onClick;
  const node = element("button", weight) as HTMLButtonElement;
  if (iconName) node.append(icon(iconName));
  if (weight === "icon") node.setAttribute("aria-label", label);
  else node.append(element("span", "label", label));
  if (key) node.append(element("kbd", "", key));
  const tip = title ?? (weight === "icon" ? label : undefined);
  if (tip || key) node.title = `${tip ?? label}${key ? ` (${key})` : ""}`;
  if (handler) node.addEventListener("click", handler);
  return node;
}
