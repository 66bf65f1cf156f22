// Shared by check.mjs and bench.mjs: Debian Chromium started headless with the flags that were
// found, on the project's machines, to render egui (WebGL2 on SwiftShader) on a closed network (never
// --enable-unsafe-webgpu: the canvas stays blank), and the reading of the app's status line.

import { chromium } from "playwright-core";

const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function launch() {
  return chromium.launch({
    executablePath: process.env.YOSOKU_CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: FLAGS,
  });
}

/** The value of `key=` in the app's status line (`started; bundles=5; tab=gantt; ...`). */
export function field(statusLine, key) {
  const m = statusLine.match(new RegExp(`(?:^|; )${key}=([^;]*)`));
  return m ? m[1] : undefined;
}

/** The q-quantile of an ascending array. */
export function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
