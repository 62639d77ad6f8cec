// What a WriteStdin call typed, as a line under its shell's name: Enter as ⏎ and other
// control characters in caret notation (^C), as the daemon's titles show them.

export interface TypedLine {
  shell: string;
  line: string;
}

/** The typed line of a WriteStdin call's input; undefined for any other input. */
export function typedLine(input: Record<string, unknown>): TypedLine | undefined {
  const shell = input.shell_id;
  const typed = input.input;
  if (typeof shell !== "string" || typeof typed !== "string") return undefined;
  return { shell, line: visible(typed) };
}

/** Control characters made visible: `\n` (and `\r`) as ⏎, the rest as ^X (a tab stays), DEL as ^?. */
export function visible(text: string): string {
  let out = "";
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (char === "\n" || char === "\r") out += "⏎";
    else if (code === 0x7f) out += "^?";
    else if (code < 0x20 && char !== "\t") out += `^${String.fromCharCode(code + 0x40)}`;
    else out += char;
  }
  return out;
}
