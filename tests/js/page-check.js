// Opens recce's profile page (agent --continuous or recce view) in
// headless Chromium and uses it as a person would: the chart and the
// flamegraph of the whole range load; with a range (FROM TO, ns since the
// epoch), a drag across the chart over it loads that range's flamegraph;
// a search highlights the frames it matches; a click on a frame zooms it
// to the full width; with a range, the whole range compared with it (the
// "compare with..." button, then a drag over the range) gives each frame
// its change of share. The chart's shaded gaps (time no window covers) are
// reported as [from, to] pairs. The bottom-up view is drawn, then a
// click on burn_cpu there puts it in focus and the callers and callees
// view shows its callees' tree and its callers' (each frame as
// DEPTH:NAME<PARENT). Over the fleet store, the chart is drawn by host,
// then the first host of the host picker is picked, then the cgroup
// CGROUP in the cgroup picker. Where
// the page has a chart, the command picker lists every command, and hot
// picked there shows hot's stacks alone. The questions the page asked
// the server as it loaded are reported in the order it asked them. Saves screenshots
// SHOT-whole.png, SHOT-range.png, SHOT-views.png, with a range
// SHOT-diff.png, with hosts SHOT-host.png, with a cgroup
// SHOT-cgroup.png.
// Prints one JSON object of what it saw for tests/cli/page.t.
//
//     node page-check.js URL SHOT [FROM TO [CGROUP]]
'use strict';
const {withPage, report} = require('./browser.js');

const names = (page) => page.$$eval('#flame div', (ds) => [...new Set(ds.map((d) => d.dataset.name))]);

// Every frame of a graph as DEPTH:NAME<PARENT, once each.
const frames = (page, box) => page.$$eval(box + ' div', (ds) => [...new Set(ds.map((d) =>
	d.dataset.depth + ':' + d.dataset.name + '<' + d.dataset.parent))]);

// Drags across the chart from time a to time b (ns since the epoch).
async function drag(page, a, b) {
	const box = await page.locator('#chart').boundingBox();
	const x0 = await page.evaluate((t) => recceChart.x(t), Number(a));
	const x1 = await page.evaluate((t) => recceChart.x(t), Number(b));
	await page.mouse.move(box.x + x0, box.y + 80);
	await page.mouse.down();
	await page.mouse.move(box.x + (x0 + x1) / 2, box.y + 80, {steps: 4});
	await page.mouse.move(box.x + x1, box.y + 80, {steps: 4});
	await page.mouse.up();
}

const loaded = (page, n) => page.waitForSelector('body[data-loaded="' + n + '"]', {timeout: 20000});

// The largest change of share among the frames of each name.
const deltas = (page) => page.$$eval('#flame div[data-delta]', (ds) => {
	const out = {};
	for (const d of ds) {
		const v = Number(d.dataset.delta);
		if (!(d.dataset.name in out) || Math.abs(v) > Math.abs(out[d.dataset.name]))
			out[d.dataset.name] = v;
	}
	return out;
});

report(async () => {
	const [url, shot, from, to, cgroup] = process.argv.slice(2);
	return await withPage(url, {width: 1100, height: 900}, async (page, errors) => {
		const out = {};
		try {
			await steps(page, out, shot, from, to, cgroup);
		} catch (e) {
			out.error = String(e);
		}
		out.errors = errors;
		return out;
	});
});

// The widths of the frames sel matches, in the page's order.
function widths(page, sel)
{
	return page.$$eval(sel, (ds) => ds.map((d) => d.getBoundingClientRect().width));
}

// Clicks the widest frame sel matches, and returns its width: a frame of
// a pixel or less (a rare stack's) lies under its neighbours' edges,
// which would take the click.
async function clickWidest(page, sel)
{
	const w = await widths(page, sel);
	const i = w.indexOf(Math.max(...w));
	await page.locator(sel).nth(i).click();
	return w[i];
}

async function steps(page, out, shot, from, to, cgroup)
{
	await page.waitForSelector('body[data-loaded="1"]', {timeout : 20000});
	// The questions of the first load, in the order they were asked.
	out.asked = await page.evaluate(
	    () => performance.getEntriesByType('resource')
		      .filter((e) => /\/api\//.test(e.name))
		      .sort((a, b) => a.startTime - b.startTime)
		      .map((e) => new URL(e.name).pathname.replace(/^.*\/api\//, '')));
	out.title = await page.title();
	out.comms = await page.$$eval('#chart polyline', (ps) => ps.map((p) => p.dataset.comm));
	out.chartShown = await page.$eval('#chartbox', (e) => !e.classList.contains('hidden'));
	out.gaps = await page.$$eval(
	    '#chart .gap', (gs) => gs.map((g) => [Number(g.dataset.from), Number(g.dataset.to)]));
	out.whole = await names(page);
	out.top = await page.$eval('#top', (e) => e.textContent);
	await page.screenshot({path : shot + '-whole.png'});
	if (from && to) {
		await drag(page, from, to);
		await loaded(page, 2);
		out.range = await names(page);
		out.status = await page.$eval('#status', (e) => e.textContent);
	}
	out.matched = await page.evaluate(() => searchFrames('^(work_a|burn_cpu)$'));
	out.highlighted = await page.locator('#flame div.match').count();
	out.widthBefore = await clickWidest(page, '#flame div.match');
	out.widthAfter = Math.max(...await widths(page, '#flame div.match'));
	out.fullWidth = (await page.locator('#flame').boundingBox()).width;
	await page.screenshot({path : shot + '-range.png'});
	out.compareShown = await page.locator('#compare').isVisible();
	if (from && to) {
		await page.click('#reset');
		await loaded(page, 3);
		await page.click('#compare');
		await drag(page, from, to);
		await loaded(page, 4);
		out.deltas = await deltas(page);
		out.diffStatus = await page.$eval('#status', (e) => e.textContent);
		await page.screenshot({path : shot + '-diff.png'});
		await page.click('#nocompare');
		await loaded(page, 5);
		out.deltasAfter = Object.keys(await deltas(page)).length;
	}
	// The bottom-up view; burn_cpu clicked there, the callers and
	// callees view of it; and the flamegraph again.
	await page.selectOption('#view', 'bottomup');
	out.bottomUp = await frames(page, '#flame');
	if (await page.locator('#flame div[data-name="burn_cpu"]').count()) {
		await clickWidest(page, '#flame div[data-name="burn_cpu"]');
		await page.selectOption('#view', 'focus');
		out.callees = await frames(page, '#flame');
		out.callers = await frames(page, '#callers');
		out.callersTitle = await page.$eval('#callers-title', (e) => e.textContent);
		out.focusLabel =
		    await page.$eval('#view option[value="focus"]', (e) => e.textContent);
		await page.screenshot({path : shot + '-views.png'});
	}
	await page.selectOption('#view', 'flame');
	out.callersHidden = await page.$eval('#callers', (e) => e.classList.contains('hidden'));
	out.flameAgain = await names(page);
	out.sideBySide = await page.evaluate(() => {
		const f = document.getElementById('flame').getBoundingClientRect();
		const t = document.getElementById('top').getBoundingClientRect();
		return t.left >= f.right && t.top < f.bottom;
	});
	// Any command alone, from the command picker.
	if (await page.locator('#comm').isVisible()) {
		out.commOptions = await page.$$eval('#comm option', (os) => os.map((o) => o.value));
		if (out.commOptions.includes('hot')) {
			const n = Number(await page.$eval('body', (b) => b.dataset.loaded));
			await page.selectOption('#comm', 'hot');
			await loaded(page, n + 1);
			out.commStatus = await page.$eval('#status', (e) => e.textContent);
			out.commWhole = await names(page);
			await page.selectOption('#comm', '');
			await loaded(page, n + 2);
		}
	}
	// Over the fleet store: the chart of each host's CPU, then each
	// command's again.
	if (await page.locator('#by').isVisible()) {
		const n = Number(await page.$eval('body', (b) => b.dataset.loaded));
		await page.selectOption('#by', 'host');
		await loaded(page, n + 1);
		out.byHost = await page.$$eval('#chart polyline',
					       (ps) => [...new Set(ps.map((p) => p.dataset.comm))]);
		await page.screenshot({path : shot + '-byhost.png'});
		await page.selectOption('#by', '');
		await loaded(page, n + 2);
	}
	// The host picker's hosts, and the first one picked.
	if (await page.locator('#host').isVisible()) {
		out.hosts = await page.$$eval('#host option', (os) => os.map((o) => o.value));
		const n = Number(await page.$eval('body', (b) => b.dataset.loaded));
		await page.selectOption('#host', out.hosts[1]);
		await loaded(page, n + 1);
		out.hostStatus = await page.$eval('#status', (e) => e.textContent);
		out.hostWhole = await names(page);
		await page.screenshot({path : shot + '-host.png'});
	}
	// And the cgroup picker's cgroups, and CGROUP picked.
	if (cgroup && await page.locator('#cgroup').isVisible()) {
		out.cgroups = await page.$$eval('#cgroup option',
						(os) => os.map((o) => o.value + '=' + o.text));
		const n = Number(await page.$eval('body', (b) => b.dataset.loaded));
		await page.selectOption('#cgroup', cgroup);
		await loaded(page, n + 1);
		out.cgroupStatus = await page.$eval('#status', (e) => e.textContent);
		out.cgroupWhole = await names(page);
		await page.screenshot({path : shot + '-cgroup.png'});
	}
}
