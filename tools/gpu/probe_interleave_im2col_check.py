#!/usr/bin/env python3
# Checks the Q26 im2col probe's dumps against the interleaved im2col rule
# (docs/hardware-notes.md, "interleave decisions", item 9): every byte of the shared
# window of every interleaved case, the delivered byte count, which armed counts
# completed, and which cases faulted.
# Usage: tools/gpu/probe_interleave_im2col_check.py tests/vectors/logs/q26-im2col-probe
#   (results-N.jsonl + bins-N.tgz per device call, as the probe wrote them)
import json, os, re, sys, tarfile, tempfile
T = 2 << 20; DST = 4096
ROOT = os.path.dirname(os.path.abspath(__file__))
src = open(os.path.join(ROOT, 'probe_interleave_im2col.cu')).read()
MACROS = {'BASE_DIMS': '{8, 5, 4, 2}', 'BASE_STR': '{256, 2048, 16384}', 'Z3': '{0, 0, 0}', 'ES1': '{1, 1, 1, 1, 1}'}

def gbyte(off):
    i, k = off // 4, off % 4
    return 0x80 | k << 5 | ((i >> (5 * k)) & 31)

def tf32(word):  # H3: round to nearest, ties away, keep 10 mantissa bits
    return (word + 0x1000) & ~0x1FFF

def parse_cases():
    body = src[src.index('const std::vector<Case> kCases'):]
    body = body[:body.index('};\n')]
    for k, v in MACROS.items(): body = re.sub(r'\b%s\b' % k, v, body)
    L = r'\{([-\d, ]+)\}'
    pat = (r'\{"(\w+)", D::(\w+), (\d), (\d), (\d), ' + L + ', ' + L + r', (\d+), (\d+), ' + L + ', ' + L + r',\s*' + L +
           r',\s*' + L + r',\s*' + L + r'(?:, (\d+))?(?:,\s*tmap_ns::OobFill::(\w+))?\}')
    out = []
    for m in re.finditer(pat, body):
        I = lambda s: [int(x) for x in s.split(',')]
        out.append(dict(name=m[1], type=m[2], il=int(m[3]), swz=int(m[4]), rank=int(m[5]), dims=I(m[6]),
                        strides=I(m[7]), cpp=int(m[8]), ppc=int(m[9]), lower=I(m[10]), upper=I(m[11]), es=I(m[12]),
                        c=I(m[13]), offs=I(m[14]), dst_extra=int(m[15] or 0), fill=m[16] or 'zero'))
    return out

def walk(c):
    """The rule: None when the base faults, else a list of (in_bounds, address) per row."""
    rank = c['rank']; sp = rank - 2  # walked dimensions 0 .. rank-3
    lo = c['lower'][:sp]; hi = [c['dims'][k] - 1 + c['upper'][k] for k in range(sp)]
    base = c['c'][:sp]
    if any(base[k] < lo[k] or base[k] > hi[k] for k in range(sp)): return None
    fixed, n = c['c'][rank - 2], c['c'][rank - 1]
    stride = [None] + c['strides']
    rows = []
    for _ in range(c['ppc']):
        g = [base[k] + c['offs'][k] for k in range(sp)] + [fixed, n]
        inb = all(0 <= g[i] < c['dims'][i] for i in range(rank))
        S = 16 if c['il'] == 1 else 32
        rows.append((inb, g[0] * S + sum(g[i] * stride[i] for i in range(1, rank))))
        for k in range(sp):
            base[k] += c['es'][k]
            if base[k] <= hi[k]: break
            base[k] = lo[k]
        else:
            n += c['es'][rank - 1]
    return rows

def expect(c):
    S = 16 if c['il'] == 1 else 32
    mask = {0: 0, 1: 1, 2: 3, 3: 7}[c['swz']]
    nan = c['fill'] == 'nan_request_zero_fma'
    out = {}
    for r, (inb, addr) in enumerate(walk(c)):
        for b in range(S):
            a = DST + c['dst_extra'] + r * S + b
            a ^= ((a >> 7) & mask) << 4
            if not inb: v = (0xF7 if b % 2 == 0 else 0x7F) if nan else 0
            elif c['type'] == 'tfloat32':
                w = sum(gbyte(T + addr + b - b % 4 + j) << (8 * j) for j in range(4))
                v = (tf32(w) >> (8 * (b % 4))) & 0xFF
            else: v = gbyte(T + addr + b)
            out[a] = v
    return out, c['ppc'] * S

cases = parse_cases()
print(len(cases), 'cases parsed')
LOGS = sys.argv[1]
bad_total = 0
for run in (1, 2):
    B = tempfile.mkdtemp()
    tarfile.open(os.path.join(LOGS, f'bins-{run}.tgz')).extractall(B)
    B = os.path.join(B, f'r{run}')
    launches, faults, seen = {}, set(), set()
    for l in open(os.path.join(LOGS, f'results-{run}.jsonl')):
        j = json.loads(l)
        if 'launch' in j: launches.setdefault(j['case'], []).append(j)
        elif 'fault' in j: faults.add(j['case'])
        elif j.get('encode') == 'CUDA_SUCCESS': seen.add(j['case'])
    for ci in sorted(seen):
        c = cases[ci]
        if c['il'] == 0: continue  # controls: the plain walk (the model's own vectors cover it)
        rows = walk(c)
        if rows is None or ci in faults:
            ok = rows is None and ci in faults
            bad_total += not ok
            print(f"#{ci} {c['name']:22s} {'fault as expected' if ok else 'FAULT MISMATCH'}")
            continue
        buf = open(os.path.join(B, f'case_{ci:03d}.bin'), 'rb').read()
        exp, total = expect(c)
        bad = sum(1 for a in range(len(buf)) if buf[a] != exp.get(a, 0x11))
        ls = launches[ci]
        counts_ok = ls[0]['changed_bytes'] == total and [l['done'] for l in ls] == [0, 1, 0]
        bad_total += bad + (not counts_ok)
        print(f"#{ci} {c['name']:22s} bad={bad} bytes={total} changed={ls[0]['changed_bytes']} "
              f"done={[(l['arm'], l['done']) for l in ls]}{'' if counts_ok else ' COUNT MISMATCH'}")
print('mismatching bytes, counts or faults:', bad_total)
sys.exit(1 if bad_total else 0)
