// Frame time of the web viewer's Gantt in headless Chromium (run by `cargo xtask bench-web`).
//
//   node bench.mjs <url> <records> [<records> ...]
//
// For each size the page opens with `#synthetic=<n>` (n synthetic records in 64 lanes, built in
// the page), shows the Gantt, and is zoomed in and out with the mouse wheel over the chart. The
// app reports eframe's CPU time of each frame in its status line (`frame_ms=`); this prints the
// median and 90th percentile of those. Chromium renders through SwiftShader (software WebGL2) here,
// and the CPU time includes issuing the WebGL calls.

import { field, launch, quantile } from "./common.mjs";

const [url, ...sizes] = process.argv.slice(2);
if (sizes.length === 0) {
  console.error("usage: node bench.mjs <url> <records> [<records> ...]");
  process.exit(2);
}

const browser = await launch();
let failed = false;
try {
  for (const n of sizes) {
    const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
    page.on("pageerror", (e) => {
      console.error(`bench-web: page error: ${e.message}`);
      failed = true;
    });
    const loadStart = Date.now();
    await page.goto(`${url}#synthetic=${n}&bundle=synthetic-${n}-records&tab=gantt`);
    let status = "";
    while (Date.now() - loadStart < 300_000) {
      status = (await page.textContent("#status")) ?? "";
      if (status.startsWith("failed") || field(status, "records") === n) break;
      await page.waitForTimeout(200);
    }
    if (field(status, "records") !== n) {
      console.error(`bench-web: ${n} records: the Gantt did not open; status: ${status}`);
      failed = true;
      await page.close();
      continue;
    }
    const openSecs = (Date.now() - loadStart) / 1000;
    const samples = [];
    for (let i = 0; i < 120; i += 1) {
      await page.mouse.move(1100 + (i % 2), 600);
      await page.mouse.wheel(0, i % 16 < 8 ? -150 : 150);
      await page.waitForTimeout(30);
      const ms = Number(field((await page.textContent("#status")) ?? "", "frame_ms"));
      if (i >= 8 && Number.isFinite(ms)) samples.push(ms);
    }
    samples.sort((a, b) => a - b);
    const median = quantile(samples, 0.5);
    const p90 = quantile(samples, 0.9);
    console.log(
      `bench-web: ${n} records: frame CPU time median ${median.toFixed(2)} ms ` +
        `(${(1000 / median).toFixed(0)} fps), p90 ${p90.toFixed(2)} ms, ${samples.length} samples; ` +
        `page load to Gantt shown ${openSecs.toFixed(1)} s`,
    );
    await page.close();
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
