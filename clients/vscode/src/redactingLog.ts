// The language client's message trace with the daemon's token blotted out: at log level
// Trace (with agentls.trace.server on) it writes every message, `initialize` included.

import type * as vscode from "vscode";

export const REDACTED = "<authToken>";

/** The text with every occurrence of the secret replaced. */
export function redact(text: string, secret: string | undefined): string {
  return secret ? text.split(secret).join(REDACTED) : text;
}

export class RedactingLog implements vscode.LogOutputChannel {
  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly secret: () => string | undefined,
  ) {}

  get name(): string {
    return this.log.name;
  }

  get logLevel(): vscode.LogLevel {
    return this.log.logLevel;
  }

  get onDidChangeLogLevel(): vscode.Event<vscode.LogLevel> {
    return this.log.onDidChangeLogLevel;
  }

  trace(message: string, ...args: unknown[]): void {
    this.log.trace(this.redact(message), ...this.redactAll(args));
  }

  debug(message: string, ...args: unknown[]): void {
    this.log.debug(this.redact(message), ...this.redactAll(args));
  }

  info(message: string, ...args: unknown[]): void {
    this.log.info(this.redact(message), ...this.redactAll(args));
  }

  warn(message: string, ...args: unknown[]): void {
    this.log.warn(this.redact(message), ...this.redactAll(args));
  }

  error(error: string | Error, ...args: unknown[]): void {
    this.log.error(this.redact(typeof error === "string" ? error : error.message), ...this.redactAll(args));
  }

  append(value: string): void {
    this.log.append(this.redact(value));
  }

  appendLine(value: string): void {
    this.log.appendLine(this.redact(value));
  }

  replace(value: string): void {
    this.log.replace(this.redact(value));
  }

  clear(): void {
    this.log.clear();
  }

  show(preserveFocus?: boolean | vscode.ViewColumn): void {
    this.log.show(typeof preserveFocus === "boolean" ? preserveFocus : undefined);
  }

  hide(): void {
    this.log.hide();
  }

  /** The log is the extension's, disposed with it, not with a client. */
  dispose(): void {}

  private redact(text: string): string {
    return redact(text, this.secret());
  }

  private redactAll(args: unknown[]): unknown[] {
    return args.map((arg) => this.redact(typeof arg === "string" ? arg : JSON.stringify(arg)));
  }
}
