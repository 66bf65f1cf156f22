// The web viewer in real headless Chromium (run by `cargo xtask test`, see xtask/src/browser.rs).
//
//   node check.mjs <url> <out dir> <zip to drop> <bundle for the validation view> <bundle count>
//                  <bundle holding a trace pyramid>
//
// egui draws into one <canvas>, so its buttons are not DOM nodes: the app publishes where it drew
// its tab and bundle buttons (`#status[data-hitboxes]`) and a status line (`#status` text). This
// script clicks into the canvas at those places as a user would, waits for the status line to
// say what the app shows, drops a zipped bundle on the canvas, reloads the page to check that the
// view survives, and takes a screenshot of each view into <out dir>. It fails on a console
// error, a page error, a blank canvas or a figure the app does not report.

import fs from "node:fs";
import path from "node:path";
import { field, launch } from "./common.mjs";
import { PNG } from "pngjs";

const [url, outDir, zipPath, validationBundle, bundleCountText, traceBundle] = process.argv.slice(2);
if (!traceBundle) {
  console.error("usage: node check.mjs <url> <out dir> <zip> <validation bundle> <bundle count> <trace bundle>");
  process.exit(2);
}
const bundleCount = Number(bundleCountText);
const TIMEOUT_MS = 90_000;
/** The first frame after the page load, at most (issue 55: within 2 s on a 2-core machine). */
const FIRST_FRAME_LIMIT_MS = 2_000;
/**
 * A frame of a view already drawn, at most: egui calls a press and release a click only when
 * they are under 0.8 s apart by the frames' clocks, so a view whose every frame takes near that
 * long loses clicks (the per-rank bars once summed a million-row table every frame).
 */
const STEADY_FRAME_LIMIT_MS = 300;

const problems = [];
const steps = [];
fs.mkdirSync(outDir, { recursive: true });

function log(text) {
  console.log(`browser-test: ${text}`);
}

async function status(page) {
  return (await page.textContent("#status")) ?? "";
}

/** Waits until the status line satisfies `ok`; a "failed: ..." status ends the wait at once. */
async function waitStatus(page, what, ok) {
  const start = Date.now();
  let last = "";
  while (Date.now() - start < TIMEOUT_MS) {
    last = await status(page);
    if (last.startsWith("failed")) {
      throw new Error(`the app failed while waiting for ${what}: ${last}`);
    }
    if (ok(last)) {
      log(`${what}: ${last} (${Date.now() - start} ms)`);
      return last;
    }
    await page.waitForTimeout(100);
  }
  throw new Error(`timed out after ${TIMEOUT_MS} ms waiting for ${what}; status: ${last}`);
}

/** Clicks the middle of the button the app says it drew for `key` (`tab:gantt`, `bundle:x`). */
async function click(page, key) {
  const start = Date.now();
  while (Date.now() - start < TIMEOUT_MS) {
    const json = await page.getAttribute("#status", "data-hitboxes");
    const box = json ? JSON.parse(json)[key] : undefined;
    if (box) {
      const [x, y, w, h] = box;
      await page.mouse.click(x + w / 2, y + h / 2);
      log(`clicked ${key} at (${(x + w / 2).toFixed(0)}, ${(y + h / 2).toFixed(0)})`);
      return;
    }
    await page.waitForTimeout(100);
  }
  throw new Error(`the app drew no button ${key}`);
}

/** Waits for the frames a pointer move asks for (eframe draws in the animation frame). */
async function framesAfterMove(page, x, y) {
  await page.mouse.move(x, y);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.waitForTimeout(50);
}

/**
 * The CPU time of a frame of the view shown once it is drawn (`frame_ms=`: eframe's time of the
 * frame before the one the status line was written in): two pointer moves over the bundle list's
 * foot, where nothing has a tooltip, each drawing a frame.
 */
async function steadyFrameMs(page) {
  await framesAfterMove(page, 10, 890);
  await framesAfterMove(page, 12, 888);
  return Number(field(await status(page), "frame_ms"));
}

/** Fails the test when a frame of the view shown takes longer than the limit. */
async function checkFrame(page, view, bundle) {
  const frameMs = await steadyFrameMs(page);
  log(`the ${view} view on ${bundle}: a frame takes ${frameMs} ms`);
  steps.push({ view, bundle, frame_ms: frameMs });
  if (!(frameMs <= STEADY_FRAME_LIMIT_MS)) {
    problems.push(`a frame of the ${view} view on ${bundle} takes ${frameMs} ms (limit ${STEADY_FRAME_LIMIT_MS} ms)`);
  }
}

/** The primitive each view is for, as its status line's `drawn=` counts it. */
const DRAWS = {
  tables: "rows",
  model: "models",
  cost: "bars",
  ranks: "bars",
  throughput: "bars",
  scores: "bars",
  scaling: "curves",
};

/** How many `kind` primitives the status line says were drawn (`drawn=bars:3,points:10`). */
function drawn(status, kind) {
  const counts = Object.fromEntries(
    (field(status, "drawn") ?? "")
      .split(",")
      .filter((p) => p.includes(":"))
      .map((p) => p.split(":")),
  );
  return Number(counts[kind] ?? 0);
}

/** Clicks "Open..." and chooses `files` in the browser's file picker. */
async function pickFiles(page, files) {
  const chooser = page.waitForEvent("filechooser", { timeout: TIMEOUT_MS });
  await click(page, "button:open");
  await (await chooser).setFiles(files);
  log(`picked ${files.map((f) => path.basename(f)).join(", ")}`);
}

/** Opens the combo box `key` (`pick:<label>`) and picks its last option. */
async function clickLast(page, key) {
  await click(page, key);
  const start = Date.now();
  while (Date.now() - start < TIMEOUT_MS) {
    const boxes = JSON.parse((await page.getAttribute("#status", "data-hitboxes")) ?? "{}");
    // The options as the popup lists them, top to bottom.
    const options = Object.keys(boxes)
      .filter((k) => k.startsWith(`${key}=`))
      .sort((a, b) => boxes[a][1] - boxes[b][1]);
    if (options.length > 1) {
      await click(page, options[options.length - 1]);
      return;
    }
    await page.waitForTimeout(100);
  }
  throw new Error(`${key} offered fewer than two options`);
}

/** A box zoom (a drag with the secondary button) over the middle fifth of the plot `key`. */
async function boxZoom(page, key) {
  const boxes = JSON.parse((await page.getAttribute("#status", "data-hitboxes")) ?? "{}");
  const box = boxes[key];
  if (!box) throw new Error(`the app drew no ${key}`);
  const [x, y, w, h] = box;
  await page.mouse.move(x + 0.4 * w, y + 0.4 * h);
  await page.mouse.down({ button: "right" });
  await page.mouse.move(x + 0.5 * w, y + 0.5 * h, { steps: 5 });
  await page.mouse.move(x + 0.6 * w, y + 0.6 * h, { steps: 5 });
  await page.mouse.up({ button: "right" });
  log(`box zoom in ${key}`);
}

/** A screenshot, and a check that the canvas shows more than a flat fill. */
async function screenshot(page, name) {
  // Two frames' grace so the picture matches the status line just read.
  await page.waitForTimeout(300);
  const file = path.join(outDir, `${name}.png`);
  const bytes = await page.screenshot({ path: file });
  const png = PNG.sync.read(bytes);
  const colours = new Set();
  let differing = 0;
  const [r0, g0, b0] = png.data;
  for (let i = 0; i < png.data.length; i += 4 * 7) {
    const [r, g, b] = [png.data[i], png.data[i + 1], png.data[i + 2]];
    colours.add((r << 16) | (g << 8) | b);
    if (Math.abs(r - r0) + Math.abs(g - g0) + Math.abs(b - b0) > 30) differing += 1;
  }
  const share = differing / (png.data.length / (4 * 7));
  log(`${file}: ${png.width}x${png.height}, ${colours.size} colours, ${(100 * share).toFixed(1)} % unlike the corner`);
  if (colours.size < 16 || share < 0.01) {
    problems.push(`${file}: the canvas looks blank (${colours.size} colours)`);
  }
  steps.push({ screenshot: file, colours: colours.size, share_unlike_corner: share });
}

async function dropFile(page, file) {
  const base64 = fs.readFileSync(file).toString("base64");
  const name = path.basename(file);
  await page.evaluate(
    ({ base64, name }) => {
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
      const transfer = new DataTransfer();
      transfer.items.add(new File([bytes], name, { type: "application/zip" }));
      const canvas = document.getElementById("yosoku_canvas");
      for (const type of ["dragenter", "dragover", "drop"]) {
        canvas.dispatchEvent(new DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true }));
      }
    },
    { base64, name },
  );
  log(`dropped ${name}`);
}

const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console error: ${m.text()} (${m.location().url})`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));

  // 1. The app draws its first frame at once, then every bundle the server lists joins it as
  // its manifest arrives (tables are read when a view needs them).
  await page.goto(url);
  await waitStatus(page, "the first frame", (t) => t.startsWith("loading;") || t.startsWith("started"));
  const firstFrameMs = Number(await page.getAttribute("#status", "data-first-frame-ms"));
  let s = await waitStatus(page, "the app to start", (t) => t.startsWith("started"));
  const bundlesMs = Number(await page.getAttribute("#status", "data-bundles-ms"));
  log(`first frame ${firstFrameMs} ms after the page began to load; every manifest by ${bundlesMs} ms`);
  steps.push({ first_frame_ms: firstFrameMs, bundles_ms: bundlesMs });
  if (!(firstFrameMs > 0 && firstFrameMs <= FIRST_FRAME_LIMIT_MS)) {
    problems.push(`the first frame came ${firstFrameMs} ms after the page began to load (limit ${FIRST_FRAME_LIMIT_MS} ms)`);
  }
  if (Number(field(s, "bundles")) !== bundleCount) {
    problems.push(`expected ${bundleCount} bundles, the app has: ${s}`);
  }
  if (field(s, "errors")) problems.push(`the app reports loading errors: ${s}`);
  // The home needs the manifests alone: no table's rows are read yet.
  if (!(Number(field(s, "rows_mb")) < 1)) problems.push(`rows were read before a view needed them: ${s}`);
  // It opens on its home: each bundle's results beside the papers' figures.
  if (field(s, "tab") !== "home") problems.push(`the app does not open on its home view: ${s}`);
  if (!(Number(field(s, "home_rows")) > 0)) problems.push(`the home view lists no results: ${s}`);
  if (!(Number(field(s, "reproduced")) > 0)) problems.push(`no result on the home view reproduces its paper: ${s}`);
  await screenshot(page, "web-1-home");
  await checkFrame(page, "home", "every bundle");
  // The grid fits the window: long result and paper texts wrap, so no result's link is pushed
  // off its right edge.
  {
    const boxes = JSON.parse((await page.getAttribute("#status", "data-hitboxes")) ?? "{}");
    const width = page.viewportSize().width;
    const cut = Object.entries(boxes).filter(([k, [x, , w]]) => k.startsWith("home:") && x + w > width);
    if (cut.length > 0) problems.push(`${cut.length} of the home's links end past the window's right edge, the first ${cut[0][0]}`);
  }
  // A result's step is a link to the view that explains it.
  await click(page, `home:${validationBundle}:0`);
  s = await waitStatus(
    page,
    "the view behind a home row",
    (t) => field(t, "tab") !== "home" && field(t, "bundle") === validationBundle && !field(t, "loading_tables"),
  );
  if (field(s, "tab") !== "validation") problems.push(`the counter model's result did not open its validation view: ${s}`);
  await screenshot(page, "web-1-home-explained");

  // Every other view once, on a bundle it has something for.
  for (const [tab, bundle] of [
    ["bundles", validationBundle],
    ["tables", validationBundle],
    ["model", validationBundle],
    ["cost", "csx600-montecarlo"],
    ["ranks", "mpi-cp2k"],
    ["throughput", "opencl-vector-width"],
    ["scores", "gpu-transfer"],
    ["scaling", "mpi-scaling"],
  ]) {
    await click(page, `bundle:${bundle}`);
    await waitStatus(page, `bundle ${bundle}`, (t) => field(t, "bundle") === bundle);
    await click(page, `tab:${tab}`);
    s = await waitStatus(page, `the ${tab} view`, (t) => field(t, "tab") === tab && !field(t, "loading_tables"));
    // What the view is for is drawn: its bars, points, curves or rows (the status line's count).
    const wanted = DRAWS[tab];
    if (wanted) {
      s = await waitStatus(page, `the ${tab} view's ${wanted}`, (t) => drawn(t, wanted) > 0).catch((e) => {
        problems.push(`the ${tab} view on ${bundle} drew no ${wanted}: ${e.message}`);
        return s;
      });
    }
    // Nothing outside the plot area: at a plot's own bounds every point and bar end is inside.
    if (drawn(s, "outside") > 0) {
      problems.push(`the ${tab} view on ${bundle} drew ${drawn(s, "outside")} points outside its plot: ${s}`);
    }
    await screenshot(page, `web-view-${tab}`);
    await checkFrame(page, tab, bundle);
  }

  // 2. Validation of a counter model: predicted vs measured for every program.
  await click(page, `bundle:${validationBundle}`);
  await waitStatus(page, "the bundle", (t) => field(t, "bundle") === validationBundle);
  await click(page, "tab:validation");
  s = await waitStatus(page, "the validation view", (t) => Number(field(t, "points")) > 0);
  if (!(Number(field(s, "program")) > 0)) problems.push(`no programs in the validation view: ${s}`);
  await screenshot(page, "web-2-validation");
  await checkFrame(page, "validation", validationBundle);

  // 2b. Selections and zoom belong to their bundle: a model group chosen and a box zoom made on
  // the cross-GPU transfer leave the forecast's view whole; back on the transfer, its zoom is
  // there still.
  await click(page, "bundle:gpu-transfer");
  s = await waitStatus(
    page,
    "the transfer's validation view",
    (t) => field(t, "bundle") === "gpu-transfer" && Number(field(t, "points")) > 0,
  );
  await clickLast(page, "pick:model group");
  s = await waitStatus(page, "a model group chosen", (t) => Number(field(t, "points")) > 0 && field(t, "points") !== field(s, "points"));
  await boxZoom(page, "plot:predicted_vs_measured");
  s = await waitStatus(
    page,
    "the zoomed scatter",
    (t) => Number(field(t, "points_in_view")) < Number(field(t, "points")),
  );
  await screenshot(page, "web-7-filter-and-zoom");
  await click(page, "bundle:gpu-forecast");
  s = await waitStatus(
    page,
    "the forecast after the transfer's filter and zoom",
    (t) => field(t, "bundle") === "gpu-forecast" && !field(t, "loading_tables") && field(t, "points"),
  );
  if (!(Number(field(s, "points")) > 0) || field(s, "points_in_view") !== field(s, "points")) {
    problems.push(`after a filter and a zoom on another bundle, the forecast does not draw all its points: ${s}`);
  }
  await screenshot(page, "web-8-bundle-switched");
  await click(page, "bundle:gpu-transfer");
  s = await waitStatus(page, "the transfer again", (t) => field(t, "bundle") === "gpu-transfer" && field(t, "points"));
  if (!(Number(field(s, "points_in_view")) < Number(field(s, "points")))) {
    problems.push(`the transfer's zoom was not kept with it: ${s}`);
  }
  await click(page, `bundle:${validationBundle}`);
  await waitStatus(page, "the validation bundle again", (t) => field(t, "bundle") === validationBundle && field(t, "points"));

  // 3. The view survives a reload (URL fragment).
  await page.reload();
  s = await waitStatus(page, "the app after a reload", (t) => t.startsWith("started") && field(t, "points"));
  if (field(s, "bundle") !== validationBundle || field(s, "tab") !== "validation") {
    problems.push(`the reload lost the view: ${s}`);
  }

  // 4. A zipped bundle dropped on the page joins the app; its MPI blocks draw as a Gantt.
  await dropFile(page, zipPath);
  const zipName = path.basename(zipPath, ".zip");
  await waitStatus(page, "the dropped bundle", (t) => field(t, "bundle") === zipName);
  await click(page, "tab:gantt");
  s = await waitStatus(page, "the Gantt view", (t) => Number(field(t, "records")) > 0);
  if (Number(field(s, "bundles")) !== bundleCount + 1) problems.push(`the drop did not add a bundle: ${s}`);
  if (Number(field(s, "lanes")) < 1) problems.push(`no lanes in the Gantt view: ${s}`);
  await screenshot(page, "web-3-gantt");

  // 4b. The "Open..." button: the browser's file picker. A CSV is named for what it is (an
  // error, no bundle); a table file of a bundle opens as a bundle of its own.
  const csv = path.join(outDir, "picked.csv");
  fs.writeFileSync(csv, "device,program,time_ms\ngpu,a,1.5\n");
  const arrow = path.join(outDir, "bundles", "csx600-montecarlo", "tables", "measured.predictions.arrow");
  const before = await status(page);
  await pickFiles(page, [csv]);
  s = await waitStatus(page, "the picked CSV refused", (t) => Number(field(t, "errors") ?? 0) > Number(field(before, "errors") ?? 0));
  if (Number(field(s, "bundles")) !== bundleCount + 1) problems.push(`a picked CSV changed the bundles: ${s}`);
  await pickFiles(page, [arrow]);
  s = await waitStatus(page, "the picked table", (t) => Number(field(t, "bundles")) === bundleCount + 2);
  await screenshot(page, "web-9-picked-files");

  // 5. A measured in-kernel trace (the H100 matrix multiply of pipelines/cuda-trace-gantt.toml):
  // its spans as Gantt lanes, per SM and per block.
  await click(page, "bundle:cuda-trace-gantt");
  await waitStatus(page, "the kernel-trace bundle", (t) => field(t, "bundle") === "cuda-trace-gantt");
  await click(page, "tab:gantt");
  s = await waitStatus(
    page,
    "the kernel trace's Gantt view",
    (t) => field(t, "bundle") === "cuda-trace-gantt" && Number(field(t, "records")) > 0,
  );
  if (!(Number(field(s, "lanes")) >= 6)) problems.push(`the kernel trace has fewer than its 6 SM lanes: ${s}`);
  await screenshot(page, "web-6-kernel-trace-gantt");

  // 6. A trace stored as a level-of-detail pyramid: the overview from its one coarsest tile,
  // then zoomed in with the wheel down to single records read from the chunks in view.
  await click(page, `bundle:${traceBundle}`);
  await waitStatus(page, "the trace bundle", (t) => field(t, "bundle") === traceBundle);
  s = await waitStatus(
    page,
    "the trace overview",
    (t) => field(t, "trace_mode") === "pyramid" && Number(field(t, "trace_loads")) >= 1,
  );
  // The overview reads the coarsest tile and the tiles of the level its width needs, no more.
  const wanted = Number(field(s, "trace_wanted_level"));
  if (!(Number(field(s, "trace_loads")) <= 1 + 2 ** wanted)) {
    problems.push(`the overview read more than the tiles of level ${wanted}: ${s}`);
  }
  await screenshot(page, "web-4-trace-overview");
  await page.mouse.move(800, 520);
  for (let i = 0; i < 300; i += 1) {
    await page.mouse.wheel(0, -240);
    await page.waitForTimeout(30);
    s = await status(page);
    if (field(s, "trace_mode") === "records" && Number(field(s, "records_drawn")) > 0) break;
  }
  s = await waitStatus(
    page,
    "single records",
    (t) => field(t, "trace_mode") === "records" && Number(field(t, "records_drawn")) > 0,
  );
  await screenshot(page, "web-5-trace-records");
  // After every view on ten bundles: the rows of those not shown are kept within the budget.
  log(`rows read at the end of the tour: ${field(s, "rows_mb")} MB`);
  steps.push({ rows_mb_at_the_end: Number(field(s, "rows_mb")) });
} catch (e) {
  problems.push(String(e.message ?? e));
} finally {
  await browser.close();
}

fs.writeFileSync(path.join(outDir, "browser-test.json"), JSON.stringify({ url, steps, problems }, null, 2));
if (problems.length > 0) {
  for (const p of problems) console.error(`browser-test: FAILED: ${p}`);
  process.exit(1);
}
log(`passed; screenshots in ${outDir}`);
