"""scripts/sass_stalls.py: a loop's lines from Nsight Compute's SASS source page."""
import lzma
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "sass_stalls.py"
PROFILE = ROOT / "tests" / "vectors" / "logs" / "check-cost-profile-h200-2026-11-28.csv.xz"

HEADER = ('"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)",'
          '"Instructions Executed","stall_wait","stall_long_sb","stall_wait (Not Issued)"\n')


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_a_loops_lines_and_their_reasons(tmp_path):
    page = tmp_path / "page.csv"
    page.write_text('==PROF== preamble line\n"Kernel Name","k"\n' + HEADER +
                    '"0x10","LDL.64 R2, [R1]","3","1","100","3","0","0"\n'
                    '"0x20","ISETP.NE.U32.AND P1, PT, R2, UR4, PT","40","39","100","2","38","0"\n'
                    '"0x30","HGMMA.64x128x8.F32.TF32 R24","1,000","900","800","1,000","0","0"\n'
                    '"0x40","EXIT","7","7","1","7","0","0"\n')
    out = run(page, "--executed", 90, 110, "--lines")
    assert out.returncode == 0, out.stderr
    # 3 + 40 of 1050 samples; by reason: wait 3 + 2, long_sb 38.
    assert "2 lines run 90..110 times: 43 samples (4.1 %)" in out.stdout
    assert "long_sb 38, wait 5" in out.stdout
    assert "0x30" not in out.stdout
    top = run(page, "--top", 1)
    assert top.returncode == 0 and top.stdout.splitlines()[1].split()[0] == "1000"


def test_not_a_source_page(tmp_path):
    other = tmp_path / "other.csv"
    other.write_text('"ID","Metric"\n"1","2"\n')
    out = run(other)
    assert out.returncode != 0 and "no \"Address\" header" in out.stderr and out.stdout == ""


def test_the_recorded_profile_producer_and_consumers(tmp_path):
    # The H200's page of CUTLASS 48 at 4096^3 traced: the producer's lines run once a k-block
    # (131,072 k-blocks), the eight consumer warps' loop eight times for each k-block but the first
    # of each of the 1,024 output tiles, which CUTLASS's mainloop issues before its loop.
    page = tmp_path / "page.csv"
    page.write_bytes(lzma.decompress(PROFILE.read_bytes()))
    producer = run(page, "--executed", 131072, 131072)
    consumers = run(page, "--executed", 8 * (131072 - 1024), 8 * (131072 - 1024))
    assert producer.returncode == 0 and consumers.returncode == 0
    share = lambda out: float(out.stdout.splitlines()[1].split("(")[1].split(" %")[0])
    assert 0 < share(producer) < 100 / 12 + 1  # one warp of twelve, never idle
    assert share(consumers) > 4 * share(producer)
