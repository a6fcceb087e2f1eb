# The physical-fidelity scoreboard (bench/SCOREBOARD.md) from a `knead compare` compare.json:
# per fidelity scene and backend, the checks against the analytic answers and the wall time per
# step with its ratio to SAP in the same run. Usage: python3 tools/scoreboard.py compare.json
import json,sys,platform,subprocess,datetime
d=json.load(open(sys.argv[1]))
cpu=[l.split(':',1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')][0]
print("# Physical-fidelity scoreboard (issue 22)\n")
print(f"`knead compare examples/fidelity -j 2` on {cpu}, 2 cores shared with other jobs, {datetime.date.today()}, Release build {d['build']}.")
print("Every scene runs at dt = 0.01 (or the finer dt its case is about) with each backend's defaults; the analytic answer and its source are in each scene file and in examples/fidelity/README.md. Cells: the checks that met the analytic answer (XFAIL: an expected failure of SAP, explained in the scene; XPASS: a backend meeting what SAP misses), then wall time per step and its ratio to SAP's in the same run. penalty and ipc are not built yet (refused).\n")
print("Regenerate: `./build/knead compare examples/fidelity -j 2 --out out/fidelity && python3 tools/scoreboard.py out/fidelity/compare.json > bench/SCOREBOARD.md`.\n")
bk=[b for b in d['backends'] if any(r['backend']==b and r['status']=='ok' for s in d['scenes'] for r in s['runs'])]
print("| scene | "+" | ".join(bk)+" |"); print("|---"*(len(bk)+1)+"|")
tot={b:[0,0] for b in bk}
for s in d['scenes']:
    runs={r['backend']:r for r in s['runs']}
    sap=runs.get('sap',{}).get('wall_per_step')
    cells=[]
    for b in bk:
        r=runs.get(b)
        if not r or r['status']!='ok': cells.append(f"failed: {r['message'][:120] if r else ''}"); continue
        parts=[]
        for c in r['checks']:
            ok=c['passed']; x=c['expect']!='pass'
            tag=('XPASS' if ok else 'XFAIL') if x else ('pass' if ok else '**FAIL**')
            parts.append(f"{c['name']} {tag} ({c['measured']:.4g} {c['unit']})")
            if not x: tot[b][0]+=ok; tot[b][1]+=1
        ms=r['wall_per_step']*1e3
        ratio='' if b=='sap' or not sap else f", {r['wall_per_step']/sap:.1f}x SAP"
        cells.append("; ".join(parts)+f"; {ms:.3g} ms/step{ratio}")
    print(f"| {s['name']} | "+" | ".join(cells)+" |")
print("\nChecks expected to pass that passed: "+", ".join(f"{b} {tot[b][0]}/{tot[b][1]}" for b in bk)+".")
