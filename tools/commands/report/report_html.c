/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace report --html FILE`: one self-contained page, no network: the data as
 * one JSON object in the page, drawn by the page's own script (a canvas for the heat
 * map, bars of plain HTML for the rest), with no URL anywhere in it.
 *
 * Kept small for a thousand ranks: the heat map is one string per rank, a character
 * per bin for the MPI share in 64 levels (100 bytes a rank); the bars are the top
 * paths only.
 */
#include "job_report.h"
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HTML_BARS 30

static const char levels[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/";

static const char page_head[] =
	"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>ringtrace report</title>\n"
	"<style>body{font:13px sans-serif;margin:16px}h2{font-size:15px;margin:18px 0 6px}"
	".row{display:flex;align-items:center;margin:1px 0}.lbl{width:420px;overflow:hidden;"
	"white-space:nowrap;text-overflow:ellipsis;font-family:monospace}.bar{height:12px;"
	"display:inline-block}.num{margin-left:6px;font-family:monospace}canvas{border:1px solid "
	"#999;image-rendering:pixelated}</style></head><body>\n"
	"<h1 style=\"font-size:17px\">ringtrace report</h1><div id=\"sum\"></div>\n"
	"<h2>MPI share: ranks (down) &times; time (across), white 0 %, dark red 100 %</h2>"
	"<canvas id=\"heat\"></canvas>\n"
	"<h2>Wait states by call path</h2><div id=\"waits\"></div>\n"
	"<h2>Imbalance per call path (max / mean of the ranks' inclusive time)</h2>"
	"<div id=\"imb\"></div>\n<script>\nconst D=";

static const char page_tail[] =
	";\n"
	"function ns(v){if(v>=1e9)return(v/1e9).toPrecision(4)+' s';if(v>=1e6)return(v/1e6)."
	"toPrecision(4)+' ms';if(v>=1e3)return(v/1e3).toPrecision(4)+' us';return v+' ns';}\n"
	"function el(t,c,x){const e=document.createElement(t);if(c)e.className=c;if(x!==undefined)"
	"e.textContent=x;return e;}\n"
	"document.getElementById('sum').textContent=D.ranks.length+' ranks, '+ns(D.span_ns)+"
	"', '+D.bins+' bins of '+ns(Math.round(D.span_ns/D.bins));\n"
	"(function(){const c=document.getElementById('heat'),n=D.heat.length,sx=Math.max(1,"
	"Math.floor(800/D.bins)),sy=Math.max(1,Math.min(20,Math.floor(800/Math.max(n,1))));"
	"c.width=D.bins*sx;c.height=n*sy;const g=c.getContext('2d'),L=D.levels;"
	"for(let r=0;r<n;r++){const s=D.heat[r];for(let b=0;b<s.length;b++){const v=L.indexOf("
	"s[b])/63;g.fillStyle='rgb('+Math.round(255-100*v)+','+Math.round(255*(1-v))+','+"
	"Math.round(255*(1-v))+')';g.fillRect(b*sx,r*sy,sx,sy);}}c.title='rank '+D.ranks[0]+"
	"' (top) to '+D.ranks[n-1];})();\n"
	"function bars(id,rows,color,fmt){const box=document.getElementById(id);let m=0;"
	"for(const r of rows)m=Math.max(m,r[1]);for(const r of rows){const d=el('div','row');"
	"d.appendChild(el('span','lbl',r[0]));const b=el('span','bar');b.style.width=("
	"m>0?Math.round(300*r[1]/m):0)+'px';b.style.background=color;d.appendChild(b);"
	"d.appendChild(el('span','num',fmt(r)));box.appendChild(d);}"
	"if(!rows.length)box.textContent='none';}\n"
	"bars('waits',D.waits.map(w=>[w[0]+': '+w[1],w[2],w[3]]),'#c33',r=>ns(r[1])+' ('+r[2]+"
	"')');\n"
	"bars('imb',D.imbalance.map(p=>[p[0],p[1],p[2],p[3]]),'#36c',r=>r[1].toFixed(3)+"
	"' (max '+ns(r[2])+' on rank '+r[3]+')');\n"
	"</script></body></html>\n";

/* The top waits by (kind, path), summed over ranks. */
static int waits_data(struct buf *b, const struct job *j)
{
	size_t n = 0;

	if (buf_puts(b, ",\"waits\":["))
		return -1;
	for (int k = 0; k < WAIT_KINDS; k++)
		for (size_t i = 0; i < j->npaths; i++) {
			const struct job_path *p = &j->paths[i];

			if (p->waits[k] == 0 || n >= HTML_BARS * WAIT_KINDS)
				continue;
			if ((n++ > 0 && buf_putc(b, ',')) || buf_putc(b, '[') ||
			    report_jstr(b, wait_kind_names[k], strlen(wait_kind_names[k])) ||
			    buf_putc(b, ',') || report_jstr(b, p->name, strlen(p->name)) ||
			    buf_putc(b, ',') || buf_put_u64(b, p->waits[k]) || buf_putc(b, ',') ||
			    buf_put_u64(b, p->wait_count[k]) || buf_putc(b, ']'))
				return -1;
		}
	return buf_putc(b, ']');
}

static int imbalance_data(struct buf *b, const struct job *j, const size_t *pv)
{
	size_t n = j->npaths < HTML_BARS ? j->npaths : HTML_BARS;
	char num[64];

	if (buf_puts(b, ",\"imbalance\":["))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct job_path *p = &j->paths[pv[i]];
		double imb = p->sum > 0 ? (double)p->max * (double)j->nranks / (double)p->sum : 1.0;

		snprintf(num, sizeof(num), "%.6g", imb);
		if ((i > 0 && buf_putc(b, ',')) || buf_putc(b, '[') ||
		    report_jstr(b, p->name, strlen(p->name)) || buf_putc(b, ',') ||
		    buf_puts(b, num) || buf_putc(b, ',') || buf_put_u64(b, p->max) ||
		    buf_putc(b, ',') || buf_put_i64(b, p->max_rank) || buf_putc(b, ']'))
			return -1;
	}
	return buf_putc(b, ']');
}

static int page_data(struct buf *b, const struct job *j, const size_t *pv)
{
	if (buf_puts(b, "{\"span_ns\":") || buf_put_u64(b, job_span(j)) ||
	    buf_puts(b, ",\"bins\":") || buf_put_u64(b, HEAT_BINS) ||
	    buf_puts(b, ",\"levels\":\"") || buf_puts(b, levels) || buf_puts(b, "\",\"ranks\":["))
		return -1;
	for (size_t i = 0; i < j->nranks; i++)
		if ((i > 0 && buf_putc(b, ',')) || buf_put_i64(b, j->ranks[i].rank))
			return -1;
	if (buf_puts(b, "],\"heat\":["))
		return -1;
	for (size_t i = 0; i < j->nranks; i++) {
		if ((i > 0 && buf_putc(b, ',')) || buf_putc(b, '"'))
			return -1;
		for (int k = 0; k < HEAT_BINS; k++) {
			uint64_t pm = heat_permille(j, &j->ranks[i], k);

			if (buf_putc(b, levels[(pm > 1000 ? 1000 : pm) * 63 / 1000]))
				return -1;
		}
		if (buf_putc(b, '"'))
			return -1;
	}
	if (buf_putc(b, ']') || waits_data(b, j) || imbalance_data(b, j, pv))
		return -1;
	return buf_putc(b, '}');
}

int job_write_html(const struct job *j, const struct report_options *o)
{
	struct buf b = {0};
	size_t *pv = job_paths_by_cost(j);
	FILE *f = NULL;
	int rc = -1;

	if (pv == NULL || page_data(&b, j, pv))
		goto out;
	f = fopen(o->html, "w");
	if (f == NULL)
		goto out;
	fputs(page_head, f);
	/* '<' only in strings: escaped, so that no "</script>" ends the script early */
	for (size_t i = 0; i < b.len; i++)
		if (b.p[i] == '<')
			fputs("\\u003c", f);
		else
			fputc(b.p[i], f);
	fputs(page_tail, f);
	rc = ferror(f) ? -1 : 0;
	if (fclose(f) != 0)
		rc = -1;
out:
	free(pv);
	buf_free(&b);
	return rc;
}
