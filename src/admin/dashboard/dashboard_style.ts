// The dashboard's style sheet, served as /dashboard.css: the policy allows no inline style, so
// the charts' colours are classes here rather than attributes the script sets.

export const DASHBOARD_CSS = `
body{font-family:sans-serif;margin:0;color:#222;background:#fafafa}
.dash-header{display:flex;align-items:baseline;gap:24px;padding:8px 16px;background:#2d3e50;color:#fff}
.dash-header h1{font-size:20px;margin:0}
.dash-status{font-size:13px}
.dash-status.dash-error{color:#ffb3b3}
main{padding:0 16px 24px}
section{margin-top:16px}
h2{font-size:17px;border-bottom:1px solid #ccc;padding-bottom:2px}
.dash-facts{display:grid;grid-template-columns:max-content auto;gap:2px 16px;margin:0}
.dash-facts dt{font-weight:bold}
.dash-facts dd{margin:0}
.dash-table{border-collapse:collapse;font-size:14px}
.dash-table th,.dash-table td{padding:3px 10px;text-align:left;vertical-align:top}
.dash-table tbody tr:nth-child(even){background:#f0f0f0}
.dash-table .dash-num{text-align:right}
.host-healthy{color:#1b7a1b}
.host-unhealthy{color:#b00020;font-weight:bold}
.dash-charts{display:flex;flex-wrap:wrap;gap:16px}
.dash-chart{background:#fff;border:1px solid #ddd;padding:4px;margin:0}
.dash-chart-title{font-size:13px;margin:2px 0}
.chart-axis{stroke:#999;stroke-width:1}
.chart-label{font-size:10px;fill:#555}
.chart-line{fill:none;stroke-width:1.5}
.series-0{stroke:#1f77b4;fill:#1f77b4}
.series-1{stroke:#d62728;fill:#d62728}
.series-2{stroke:#2ca02c;fill:#2ca02c}
.chart-line.series-0,.chart-line.series-1,.chart-line.series-2{fill:none}
.dash-controls{display:flex;gap:12px;align-items:center;margin-bottom:6px}
.dash-note{font-size:13px;color:#666}
.home-table{font-family:sans-serif;border-collapse:collapse}
.home-data{padding:4px 12px;text-align:left;vertical-align:top}.home-row:nth-child(even){background:#f2f2f2}
.home-form{margin:0}.home-param{margin-right:12px;white-space:nowrap}
`;
