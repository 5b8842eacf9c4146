#!/usr/bin/env python3
# Checks the Q26 probe's dumps against the interleave rule (docs/hardware-notes.md,
# "interleave decisions"): every byte of the shared window of every interleaved case,
# the delivered byte count, and which armed counts completed.
# Usage: tools/gpu/probe_interleave_check.py tests/vectors/logs/q26-probe
#   (results-N.jsonl + bins-N.tgz per device call, as the probe wrote them)
import json, sys, os, re, tarfile, tempfile
T = 2 << 20; DST = 4096
ROOT = os.path.dirname(os.path.abspath(__file__))
src_cpp = open(os.path.join(ROOT, 'probe_interleave.cu')).read()
def gbyte(off):
    i, k = off // 4, off % 4
    return 0x80 | k << 5 | ((i >> (5 * k)) & 31)
def expect(c, once_dim):
    rank = c['rank']; S = 16 if c['il'] == 1 else 32
    n = [ -(-c['box'][i] // c['es'][i]) for i in range(rank)]
    if once_dim is not None: n[once_dim] = 1
    mask = {0:0,1:1,2:3,3:7}[c['swz']]
    out = {}  # window offset -> byte or ('F')
    slot = 0
    import itertools
    ranges = [range(n[i]) for i in range(rank)]
    for ks in itertools.product(*reversed(ranges)):
        k = list(reversed(ks))
        g = [c['c'][i] + k[i] * c['es'][i] for i in range(rank)]
        inb = all(0 <= g[i] < c['dims'][i] for i in range(rank))
        addr = T + g[0] * S + sum(g[i] * c['strides'][i - 1] for i in range(1, rank))
        for b in range(S):
            a = DST + c['dst_extra'] + slot * S + b
            a2 = a ^ (((a >> 7) & mask) << 4)
            out[a2] = gbyte(addr + b) if inb else 'F'
        slot += 1
    return out, slot * S
def parse_cases():
    body = src_cpp[src_cpp.index('const std::vector<Case> kCases'):]
    body = body[:body.index('};\n')]
    cases = []
    for m in re.finditer(r'\{"(\w+)", D::(\w+), (\d), (\d), (\d), \{([-\d, ]+)\}, \{([-\d, ]+)\}, \{([-\d, ]+)\},\s*\{([-\d, ]+)\},\s*\{([-\d, ]+)\}(?:, (\d+))?(?:,\s*tmap_ns::OobFill::(\w+))?\}', body):
        L = lambda s: [int(x) for x in s.split(',')]
        cases.append(dict(name=m[1], type=m[2], il=int(m[3]), swz=int(m[4]), rank=int(m[5]), dims=L(m[6]), strides=L(m[7]), box=L(m[8]), es=L(m[9]), c=L(m[10]), dst_extra=int(m[11] or 0), fill=m[12] or 'zero'))
    return cases
cases = parse_cases()
print(len(cases), "cases parsed")
LOGS = sys.argv[1]
bad_total = 0
for run in (1, 2):
    B = tempfile.mkdtemp()
    tarfile.open(os.path.join(LOGS, f'bins-{run}.tgz')).extractall(B)
    res = {}
    for l in open(os.path.join(LOGS, f'results-{run}.jsonl')):
        j = json.loads(l)
        if 'launch' in j: res.setdefault(j['case'], []).append(j)
    for ci, launches in sorted(res.items()):
        c = cases[ci]
        if c['il'] == 0: continue
        buf = open(os.path.join(B, f"case_{ci:03d}_0.bin"), 'rb').read()
        exp, total = expect(c, c['rank'] - 2)
        bad = 0; fills = set()
        for a in range(len(buf)):
            e = exp.get(a)
            if e is None:
                if buf[a] != 0x11: bad += 1
            elif e == 'F':
                fills.add(buf[a])
            elif buf[a] != e: bad += 1
        done = [(l['arm'], l['done']) for l in launches]
        ok_count = launches[0]['changed_bytes'] == total
        bad_total += bad + (not ok_count)
        print(f"#{ci} {c['name']:22s} bad={bad} total={total} changed={launches[0]['changed_bytes']} fills={sorted(hex(f) for f in fills)} {'' if ok_count else 'COUNT MISMATCH'} {done}")
print('mismatching bytes or counts:', bad_total)
sys.exit(1 if bad_total else 0)
