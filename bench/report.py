#!/usr/bin/env python3
"""Turns the lines scripts/bench printed (its raw file) into bench/RESULTS.md.

Every figure in the report is one of those lines' values, or a difference or ratio of two of
them computed here (and so printed by scripts/bench, which shows the report it writes). The raw
lines are appended at the end.
"""
import sys

MIB = 1024.0


def parse(path):
    facts, rows, raw = {}, {}, []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            raw.append(line)
            tag, _, rest = line.partition(" ")
            if tag in ("machine", "version", "linkage", "setup"):
                key, _, value = rest.partition("=")
                facts[(tag, key)] = value
                continue
            if tag in ("store", "finger", "syncs", "conc-audit", "conc-log", "cli-json", "conc-wrong-audit", "section"):
                facts.setdefault((tag, "lines"), []).append(rest)
                continue
            fields = {}
            words = rest.split(" ")
            if words and "=" not in words[0]:   # "process ..." lines
                fields["_kind"] = words.pop(0)
            for w in words:
                k, sep, v = w.partition("=")
                if sep:
                    fields[k] = v
            if fields.get("_kind") == "fact":   # several "fact" lines of one section: merged
                rows.setdefault((tag, "fact"), {}).update(fields)
                continue
            name = fields.get("case") or fields.get("dlopen") or fields.get("fsync") or fields.get("_kind", "?")
            rows[(tag, name)] = fields
    return facts, rows, raw


def num(row, key):
    try:
        return float(row[key])
    except (KeyError, TypeError, ValueError):
        return None


def ms(us):
    return "–" if us is None else f"{us / 1000:.3f}"


def ms2(us):
    return "–" if us is None else f"{us / 1000:.2f}"


def ratio(a, b):
    return "–" if a is None or b in (None, 0) else f"{a / b:.2f}×"


def signed_ms(us):
    return "–" if us is None else f"{us / 1000:+.3f}"


def main():
    facts, rows, raw = parse(sys.argv[1])
    baseline = parse(sys.argv[2]) if len(sys.argv) > 2 else None
    F = lambda tag, key: facts.get((tag, key), "?")
    R = lambda tag, name: rows.get((tag, name), {})
    med = lambda tag, name: num(R(tag, name), "median_us")
    p90 = lambda tag, name: num(R(tag, name), "p90_us")
    errs = lambda tag, name: R(tag, name).get("errors", "?")
    out = []
    w = out.append

    w("# biounlock benchmarks")
    w("")
    w(f"Written by `{F('machine', 'command')}` ({F('machine', 'mode')} mode) on {F('machine', 'date')}. Every "
      "figure below was printed by that run (the raw lines are at the end); differences and ratios "
      "are computed from them. These are benchmarks, not tests: `scripts/test` asserts no time.")
    w("")
    w("## Machine")
    w("")
    w("| | |")
    w("|---|---|")
    for key, label in [("nproc", "cores (nproc)"), ("cpu", "CPU"), ("memory", "memory"), ("kernel", "kernel"),
                       ("os", "OS"), ("swift", "Swift"), ("fs", "filesystem of the stores"), ("fs_journal", "its journal")]:
        w(f"| {label} | {F('machine', key)} |")
    w(f"| load average at start / end | {F('machine', 'load_start')} / {F('machine', 'load_end')} |")
    w(f"| CPU pressure (PSI, some tasks waiting for a core) at start / end | {F('machine', 'cpu_pressure_start')} / {F('machine', 'cpu_pressure_end')} |")
    w("| packages | " + ", ".join(f"{k[1]} {v}" for k, v in sorted(facts.items()) if k[0] == "version"
                                  and k[1] != "module_size_bytes") + " |")
    w(f"| pam_biounlock.so | {F('version', 'module_size_bytes')} bytes, NEEDED: {F('linkage', 'module_needed')}, "
      f"NODELETE flag: {'yes' if F('linkage', 'nodelete') == '1' else 'no'} |")
    secs = facts.get(("section", "lines"), [])
    if secs:
        w("| CPU pressure when each timed section started (after waiting for it to drop, bounded) | "
          + "; ".join(f"{l.split(' ')[0]}: {l.split('cpu_pressure_avg10=')[1].split(' ')[0]} after {l.split('waited_s=')[1]} s"
                      for l in secs) + " |")
    w("")
    w("The machine is shared with other engineers' builds: the load average and CPU pressure above are the noise. "
      "Cases that are compared run interleaved (round-robin in the same process or the same "
      "spawning loop), so each comparison shares the same conditions; medians are reported. In one "
      "process the rounds run blocks of 50 transactions of each case: alternating single transactions "
      "of heavy and light cases leaves every transaction with caches another case has cooled, which "
      "slowed down even pam_permit compared with a loop of its own.")
    w("")

    # ---------------------------------------------------------------- targets
    pin = med("inslow", "bio-pin")
    argon = med("inslow", "argon2")
    pinmin = med("inproc", "bio-pin-min")
    argonmin = med("inproc", "argon2-min")
    mem_permit = num(R("mem-permit", "process"), "maxrss_kib")
    mem_off = num(R("mem-off", "process"), "maxrss_kib")
    mem_touch = num(R("mem-touch", "process"), "maxrss_kib")
    mem_pinmin = num(R("mem-pinmin", "process"), "maxrss_kib")
    mem_pin = num(R("mem-pin", "process"), "maxrss_kib")
    argon_buf = None
    if R("mem-argon2", "process"):
        argon_buf = num(R("mem-argon2", "process"), "maxrss_kib") - num(R("mem-argon2", "process"), "maxrss_start_kib")
    maps_off = R("mem-off", "process").get("maps_match", "?")
    maps_touch = R("mem-touch", "process").get("maps_match", "?")
    ldd_fprint = F("linkage", "ldd_libfprint")

    def verdict(ok):
        return "**met**" if ok else "**missed**"

    w("## Targets")
    w("")
    w("| target | measured in this run | verdict |")
    w("|---|---|---|")
    t = []
    cpu = lambda tag, name: num(R(tag, name), "cpu_median_us")

    def cpu_note(tag, a, b, limit):
        ca, cb = cpu(tag, a), cpu(tag, b)
        if ca is None or cb is None:
            return "", None
        return (f"; CPU time {ms(ca)} − {ms(cb)} ms = {signed_ms(ca - cb)} ms"), ca - cb <= limit

    def over_row(target, tag, case, base, limit_us):
        """A target on one case's median over another's, judged on wall time (CPU time beside it)."""
        a, b = med(tag, case), med(tag, base)
        if a is None or b is None:
            return
        d = a - b
        note, cpu_ok = cpu_note(tag, case, base, limit_us)
        w(f"| {target} | wall {ms(a)} − {ms(b)} ms = {signed_ms(d)} ms{note} | {verdict(d <= limit_us)}"
          + (" (met on CPU time)" if d > limit_us and cpu_ok else "") + " |")

    over_row("user without biometric unlock, in process: at most 0.5 ms over pam_permit", "inproc", "bio-off", "permit", 500)
    over_row("the same, one whole process per transaction: at most 2 ms over pam_permit", "proc", "bio-off", "permit", 2000)
    ok = ldd_fprint == "0" and maps_off == "0" and maps_touch == "0"
    w(f"| libfprint not loaded by the module | ldd lines naming libfprint: {ldd_fprint}; /proc/self/maps lines after the "
      f"memory runs: {maps_off} (not enabled), {maps_touch} (touch) | {verdict(ok)} |")
    if pin is not None and argon is not None:
        d = pin - argon
        dmin = None if pinmin is None or argonmin is None else pinmin - argonmin
        # Argon2id at the shipped cost varies by more than the 1 ms being judged from round to round, so
        # the verdict uses the minimum-cost hash, where everything else is the same path.
        ok = (dmin if dmin is not None else d) <= 1000
        extra = "" if dmin is None else (f"; with the minimum-cost hash (Argon2id negligible, the figure judged): "
                                         f"{ms(pinmin)} − {ms(argonmin)} ms = {signed_ms(dmin)} ms")
        w(f"| passcode path: Argon2id's own time plus at most 1 ms | shipped cost: {ms(pin)} − {ms(argon)} ms (Argon2id alone, "
          f"same rounds; within the round-to-round noise of Argon2id) = {signed_ms(d)} ms{extra} | {verdict(ok)} |")
    # A touch's success (its audit row and the store's syncs) against a transaction that reads
    # the store and steps aside.
    over_row("touch, in process: at most 1 ms over a user without biometric unlock", "inproc", "bio-touch", "bio-off", 1000)
    if None not in (mem_permit, mem_off, mem_touch):
        worst = max(mem_off, mem_touch, mem_pinmin or 0) - mem_permit
        pin_over = None if mem_pin is None or argon_buf is None else mem_pin - mem_permit - argon_buf
        ok = worst <= 8 * 1024 and (pin_over is None or pin_over <= 8 * 1024)
        w(f"| peak RSS at most 8 MiB over pam_permit (outside Argon2id's buffer) | not enabled {((mem_off - mem_permit) / MIB):+.2f} MiB, "
          f"touch {((mem_touch - mem_permit) / MIB):+.2f} MiB, passcode (minimum-cost hash) "
          f"{(((mem_pinmin or 0) - mem_permit) / MIB):+.2f} MiB"
          + ("" if pin_over is None else f", passcode at shipped cost less Argon2id's {argon_buf / MIB:.2f} MiB: {pin_over / MIB:+.2f} MiB")
          + f" | {verdict(ok)} |")
    scale_ok = True
    scale_txt = []
    for kind in ("off", "touch"):
        a, b = med("scale", f"{kind}-s1"), med("scale", f"{kind}-sbig")
        if a and b:
            scale_txt.append(f"{'not enabled' if kind == 'off' else 'touch'} {b / a:.2f}×")
            scale_ok = scale_ok and b / a <= 1.2
    big = next((l for l in facts.get(("store", "lines"), []) if l.startswith("sbig ")), "")
    w(f"| scale: the big store ({big.split(' bytes=')[0].replace('sbig ', '')}) at most 1.2× the 1-user store | "
      f"{', '.join(scale_txt)} | {verdict(scale_ok)} |")
    conc_errors = [(k[1], v.get("errors", "?"), v.get("abnormal_exits", "?")) for k, v in rows.items() if k[0] == "conc"]
    p64 = [e for e in conc_errors if e[0].endswith("-p64")]
    ok = bool(p64) and all(e[1] == "0" and e[2] == "0" for e in p64)
    logged64 = []
    for line in raw:
        if line.startswith("conc-log case=") and "-p64 " in line:
            d = dict(x.split("=", 1) for x in line.split(" ")[1:])
            logged64.append(f"{d['case']}: {d['module_errors_logged']}")
    w(f"| 64 parallel processes: zero errors (results other than the expected code) | "
      + ", ".join(f"{e[0]}: {e[1]} errors, {e[2]} abnormal exits" for e in p64)
      + (f"; errors the module logged while the result stood: {', '.join(logged64)}" if logged64 else "")
      + f" | {verdict(ok)}" + (" for results; see §4 for the logged write failures" if ok and any(not x.endswith(': 0') for x in logged64) else "")
      + " |")
    su = med("cli", "status-user")
    if su is not None:
        w(f"| `biounlock status USER` (1,000 users) under 15 ms | {ms2(su)} ms | {verdict(su < 15000)} |")
    # Section 6: the fingerprint paths against pam_fprintd, same run, interleaved.
    tf, tl, tp = R("touch", "bio-fprintd"), R("touch", "bio-libfprint"), R("touch", "pam_fprintd")
    if tf and tp and num(tf, "ready_median_us") is not None and num(tp, "ready_median_us") is not None:
        a, b = num(tf, "ready_median_us"), num(tp, "ready_median_us")
        w(f"| `sensor=fprintd`: start → reader verifying no slower than pam_fprintd (medians, §6) | "
          f"{ms2(a)} ms against {ms2(b)} ms: ratio {a / b:.2f} | {verdict(a <= b)} |")
        a, b = num(tf, "touch_median_us"), num(tp, "touch_median_us")
        if a is not None and b is not None:
            w(f"| `sensor=fprintd`: touch → PAM_SUCCESS at most 1 ms more than pam_fprintd's (medians, §6) | "
              f"{ms2(a)} − {ms2(b)} ms = {signed_ms(a - b)} ms | {verdict(a - b <= 1000)} |")
    if tl and tf and tp and num(tl, "work_median_us") is not None:
        l, f, p_ = num(tl, "work_median_us"), num(tf, "work_median_us"), num(tp, "work_median_us")
        lr, fr, pr = num(tl, "ready_median_us"), num(tf, "ready_median_us"), num(tp, "ready_median_us")
        ok = l < f and l < p_
        w(f"| `sensor=libfprint` faster than both (the transaction without the finger's 100 ms, §6) | {ms2(l)} ms against "
          f"{ms2(f)} (`sensor=fprintd`) and {ms2(p_)} (pam_fprintd); ready {ms2(lr)} against {ms2(fr)} and {ms2(pr)} | {verdict(ok)} |")
    if tf:
        ok = R("touch", "fact").get("fprintd_helper_libfprint") == "0"
        w(f"| the helper for `sensor=fprintd` loads no libfprint | ldd lines of biounlock-fprintd naming libfprint: "
          f"{R('touch', 'fact').get('fprintd_helper_libfprint', '?')} (LinkageTests and FprintdModuleTests check ldd and "
          f"/proc/PID/maps while verifying) | {verdict(ok)} |")
    w("")

    # ---------------------------------------------------------------- 1
    w("## 1. Per transaction")
    w("")
    w("A transaction is `pam_start_confdir` + `pam_authenticate` + `pam_end`, as sudo does it: libpam "
      "parses the service file and dlopens the module in `pam_start`, and dlcloses it in `pam_end`. "
      "pam_permit, pam_unix and pam_fprintd are really unmapped and mapped again each time; "
      "pam_biounlock.so is linked `-z nodelete`, so after its first load it stays mapped and later "
      "dlopens only take a reference. Each stack has one `auth` line (biounlock's with the README's "
      "control values); the conversation answers prompts. Cases:")
    w("")
    w("- **permit**: `pam_permit.so` (the floor).")
    w("- **bio-off**: biounlock, a user with no row in the store (biometric unlock not enabled): the module "
      "returns PAM_IGNORE; libpam reports a stack where no module decided as PAM_PERM_DENIED, the expected result. "
      "(The README's control values also ignore PAM_AUTHINFO_UNAVAIL and PAM_MAXTRIES, so in the other cases a "
      "PAM_PERM_DENIED error means the module stepped aside: e.g. no touch within `timeout`.)")
    w("- **bio-touch**: biounlock, an enrolled and enabled user, with a simulated touch already waiting: "
      "`bench/sim-finger` watches the socket directory (inotify) and connects as soon as the sensor's socket "
      "appears, so the touch is in the listen backlog when the module first polls.")
    w("- **bio-pin**: biounlock, the passcode path at the shipped Argon2id cost (PIN set with "
      f"`biounlock passcode set --stdin`, {F('setup', 'shipped_hash_params')}); the finger is skipped because the lid "
      "reads closed (`lid_path` points at a directory with a closed lid), then the PIN is answered. "
      "**argon2** is libsodium's `crypto_pwhash_str_verify` on the same hash, alone.")
    w(f"- **bio-pin-min** / **argon2-min**: the same with a hash at libsodium's minimum cost ({F('setup', 'minimum_hash_params')}), "
      "written into the store with sqlite3, so that everything except Argon2id can be measured precisely.")
    w(f"- **unix**: `pam_unix.so` as root (reads the shadow copy directly), a yescrypt password "
      f"({F('setup', 'yescrypt_params')}).")
    w(f"- **fprintd**: `pam_fprintd.so` with no daemon ({F('setup', 'dbus_system_bus')}); it answers PAM_AUTHINFO_UNAVAIL.")
    w("")
    w("Wall time is what the caller waits; CPU time (user + system of the thread, or of the child process) "
      "leaves out waiting for a core or for the disk, so it is the steadier figure on a loaded machine "
      "but misses the cost of durable writes.")
    w("")
    w("Module arguments: `sensor=simulated sim_socket=… db=… config=… require_passcode=none "
      "lid_path=… logind_path=… proc_path=… timeout=2`; `config` is a copy of the config file every install has "
      "(`pam.d/biounlock.conf.example`, installed as /etc/security/biounlock.conf), which the module reads "
      "in every transaction; the arguments override what differs for the bench. `logind_path` and `proc_path` "
      "name empty directories: logind has no record of the session, and no process is above the caller, so "
      "a bench started over SSH measures the same local transactions (the walk up the caller's processes "
      "that a machine without logind makes is left out). (The baseline's runs named "
      "a missing config file instead, `config=/nonexistent`, for which the module logged a notice in every "
      "transaction.)")
    w("")

    def table(tag, names, base, title_note):
        n = R(tag, names[0]).get("n", "?")
        blk = R(tag, names[0]).get("block")
        how = ("each case once per round, cases interleaved" if blk in (None, "1")
               else f"cases interleaved in blocks of {blk} consecutive transactions")
        w(f"{title_note} ({n} transactions of each case, {how}; times in ms)")
        w("")
        w("| case | median | p90 | p99 | over pam_permit | ratio to pam_permit | CPU median | CPU over pam_permit | errors |")
        w("|---|---|---|---|---|---|---|---|---|")
        bc = num(R(tag, base), "cpu_median_us")
        b = med(tag, base)
        for name in names:
            row = R(tag, name)
            if not row:
                continue
            m = num(row, "median_us")
            over = "–" if name in (base, "true") or name.startswith("argon2") else signed_ms(None if m is None or b is None else m - b)
            rt = "–" if name in (base, "true") or name.startswith("argon2") else ratio(m, b)
            c = num(row, "cpu_median_us")
            cover = "–" if name in (base, "true") or name.startswith("argon2") or c is None or bc is None else signed_ms(c - bc)
            w(f"| {name} | {ms(m)} | {ms(num(row, 'p90_us'))} | {ms(num(row, 'p99_us'))} | {over} | {rt} | {ms(c)} | {cover} | {row.get('errors', '?')}"
              + ("" if row.get("first_error", "-") == "-" else f" (first: {row['first_error']})") + " |")
        w("")

    w("### In one process, looping")
    w("")
    table("inproc", ["permit", "bio-off", "bio-touch", "fprintd", "bio-pin-min", "argon2-min"], "permit", "Fast cases")
    table("inslow", ["permit", "unix", "bio-pin", "argon2"], "permit", "Argon2id and yescrypt")
    w("### One whole process per transaction")
    w("")
    w("Each case is a new process (`posix_spawn` + `waitpid` of `pam-loop loop --n 1`), so it includes exec, "
      "the dynamic linker, and the first load of every module; **true** is `/bin/true`, the cost of a process.")
    w("")
    table("proc", ["true", "permit", "bio-off", "bio-touch", "fprintd", "bio-pin-min", "unix"], "permit", "Per process")
    table("procslow", ["permit", "bio-pin"], "permit", "Per process, shipped Argon2id cost")
    if R("debian", "i3lock-plain"):
        n = R("debian", "i3lock-plain").get("n", "?")
        w("### The typed password at Debian's own i3lock and gdm-password files (issue 33)")
        w("")
        w(f"Debian's unedited files (`Tests/Fixtures/debian-pam.d`), common-* as Debian's pam-auth-update writes them "
          f"without biounlock (plain) and with its profile (bio); the Unix password typed (yescrypt), the reader "
          f"waiting behind biounlock's prompt; one whole process per transaction in a namespace of its own, "
          f"the four cases interleaved ({n} rounds; times in ms).")
        w("")
        w("| file | without biounlock | with biounlock | difference | ratio | errors (without / with) |")
        w("|---|---|---|---|---|---|")
        for svc in ["i3lock", "gdm-password"]:
            a, b = R("debian", svc + "-plain"), R("debian", svc + "-bio")
            ma, mb = num(a, "median_us"), num(b, "median_us")
            diff = signed_ms(None if ma is None or mb is None else mb - ma)
            w(f"| {svc} | {ms(ma)} | {ms(mb)} | {diff} | {ratio(mb, ma)} | {a.get('errors', '?')} / {b.get('errors', '?')} |")
        w("")
    w("### What loading costs a fresh process")
    w("")
    w("`pam-loop dlopen`: a forked process dlopens the libraries in order with RTLD_NOW, as libpam loads a "
      "module; each later dlopen finds the earlier ones already loaded. The last row loads the module "
      "alone, dependencies included.")
    w("")
    w("| dlopen | median ms | p90 ms |")
    w("|---|---|---|")
    for k, v in rows.items():
        if k[0] == "dlopen":
            w(f"| {k[1].split('/')[-1]} (after the rows above) | {ms(num(v, 'median_us'))} | {ms(num(v, 'p90_us'))} |")
    for k, v in rows.items():
        if k[0] == "dlopen1":
            w(f"| {k[1].split('/')[-1]} with its dependencies, alone | {ms(num(v, 'median_us'))} | {ms(num(v, 'p90_us'))} |")
    w("")

    # ---------------------------------------------------------------- 2
    w("## 2. Memory")
    w("")
    w("Peak RSS (`getrusage` ru_maxrss) of the looping process, one process per case; the start column is "
      "the peak before the first transaction. VmRSS after the warm-up and at the end shows memory kept "
      "across transactions; at the end it is split into anonymous pages (private to the process) and "
      "file-backed pages (the code and read-only data of the mapped libraries, shared with every other "
      "process that maps them: most of what the module adds). **argon2** runs libsodium's verify alone: "
      "its peak minus its start is Argon2id's own buffer.")
    w("")
    w("| run | transactions | peak RSS at start KiB | peak RSS KiB | over pam_permit | VmRSS after warm-up → end KiB | at the end: anonymous / file-backed KiB | libfprint maps |")
    w("|---|---|---|---|---|---|---|---|")
    for tag, label in [("mem-permit", "permit"), ("mem-off", "bio-off"), ("mem-touch", "bio-touch"),
                       ("mem-pinmin", "bio-pin-min"), ("mem-pin", "bio-pin (shipped cost)"),
                       ("mem-argon2", "argon2 alone (shipped cost)"), ("mem-fprintd", "fprintd")]:
        p = R(tag, "process")
        if not p:
            continue
        c = next((v for k, v in rows.items() if k[0] == tag and k[1] != "process"), {})
        peak = num(p, "maxrss_kib")
        over = "–" if tag in ("mem-permit", "mem-argon2") or peak is None or mem_permit is None else f"{(peak - mem_permit) / MIB:+.2f} MiB"
        w(f"| {label} | {c.get('n', '?')} | {p.get('maxrss_start_kib')} | {p.get('maxrss_kib')} | {over} | "
          f"{p.get('rss_warm_kib')} → {p.get('rss_end_kib')} | {p.get('rss_anon_end_kib', '?')} / {p.get('rss_file_end_kib', '?')} | "
          f"{p.get('maps_match')} |")
    w("")

    # ---------------------------------------------------------------- 3
    w("## 3. Scale")
    w("")
    w("Three stores made by the CLI (daemon enrolled, PIN set, enabled), two of them filled with sqlite3 "
      "directly: generated users (each with a template and a passcode hash, half enabled, every tenth with "
      "a `sudo` override) and audit events. The same two transactions run on each, interleaved: a user "
      "with no row (not enabled) and daemon's touch (which also writes its success and an audit row).")
    w("")
    for l in facts.get(("store", "lines"), []):
        if l.startswith("fill_seconds"):
            w(f"Filling the stores took {l.split('=')[1]} s.")
            w("")
    w(f"{R('scale', 'off-s1').get('n', '?')} transactions of each case, interleaved in blocks of {R('scale', 'off-s1').get('block', '?')}.")
    w("")
    w("| store | users | events | bytes | not enabled: median ms | ratio to 1 user | touch: median ms | ratio to 1 user | errors |")
    w("|---|---|---|---|---|---|---|---|---|")
    for l in facts.get(("store", "lines"), []):
        if l.startswith("fill_seconds"):
            continue
        name, *kv = l.split(" ")
        d = dict(x.split("=", 1) for x in kv)
        off, touch = med("scale", f"off-{name}"), med("scale", f"touch-{name}")
        e = f"{errs('scale', 'off-' + name)}, {errs('scale', 'touch-' + name)}"
        w(f"| {name} | {int(d['users']):,} | {int(d['events']):,} | {int(d['bytes']):,} | {ms(off)} | "
          f"{ratio(off, med('scale', 'off-s1'))} | {ms(touch)} | {ratio(touch, med('scale', 'touch-s1'))} | {e} |")
    w("")

    # ---------------------------------------------------------------- 4
    w("## 4. Concurrency")
    w("")
    w("`pam-loop parallel`: P forked processes released together, each running its transactions back to back "
      "on the same store. **bio-off** only reads; **bio-pin-min** (PIN at minimum Argon2id cost) writes "
      "once per transaction (the counter reset and the audit row in one commit). Any result other than the expected code is an error; "
      "audit rows are counted in the store before and after.")
    w("")
    w("| case | processes | transactions | errors | wall s | throughput /s | median ms | p90 ms | p99 ms | audit rows written / expected | errors the module logged |")
    w("|---|---|---|---|---|---|---|---|---|---|---|")
    logged = {}
    for line in raw:
        if line.startswith("conc-log case="):
            d = dict(x.split("=", 1) for x in line.split(" ")[1:])
            logged[d["case"]] = d["module_errors_logged"] + ("" if d["first"] == "-" else f" (first: “{d['first'].replace('_', ' ')}”)")
    audit = {}
    for k, v in facts.items():
        pass
    for line in raw:
        if line.startswith("conc-audit case="):
            d = dict(x.split("=", 1) for x in line.split(" ")[1:])
            audit[d["case"]] = f"{d['written_rows']} / {d['expected_rows']}"
    for k, v in rows.items():
        if k[0] != "conc":
            continue
        w(f"| {k[1].rsplit('-p', 1)[0]} | {v.get('procs')} | {v.get('total')} | {v.get('errors')}"
          + ("" if v.get("first_error", "-") == "-" else f" (first: {v['first_error']})")
          + f" | {v.get('wall_s')} | {v.get('throughput_per_s')} | {ms(num(v, 'median_us'))} | {ms(num(v, 'p90_us'))} | "
          f"{ms(num(v, 'p99_us'))} | {audit.get(k[1], '–')} | {logged.get(k[1], '–')} |")
    wrong = R("conc-wrong", "wrong-pin")
    wa = next((l for l in raw if l.startswith("conc-wrong-audit ")), None)
    if wrong and wa:
        d = dict(x.split("=", 1) for x in wa.split(" ")[1:])
        w("")
        w(f"**{wrong.get('procs')} wrong PINs at once** (shipped Argon2id cost, one transaction per process, `passcode_lockout` "
          f"{d['lockout_threshold']}): {wrong.get('errors')} results other than PAM_PERM_DENIED (each wrong PIN is handed on "
          f"and the bench's stack has no password module after biounlock, so no module decides), wall {wrong.get('wall_s')} s. "
          f"The audit log shows {d['verified_wrong']} attempts verified (reason wrong-passcode) and {d['refused_locked']} "
          f"refused as locked; the user's failure counter ended at {d['counter']}; the module logged "
          f"{d['module_errors_logged']} errors"
          + ("" if d.get("first", "-") == "-" else f" (first: “{d['first'].replace('_', ' ')}”)") + ".")
    counters = next((l for l in raw if l.startswith("conc-audit counters")), None)
    if counters:
        w("")
        w(f"Counters of the passcode user afterwards: {counters.split('counters sys ')[1]}.")
    w("")

    # ---------------------------------------------------------------- 5
    w("## 5. CLI")
    w("")
    w("Each command a new process (output to /dev/null), interleaved with `/bin/true`.")
    w("")
    w("| command | median ms | p90 ms | over `true` | errors |")
    w("|---|---|---|---|---|")
    tr = med("cli", "true")
    labels = {"true": "`/bin/true`", "status-user": "`biounlock status daemon` (1,000 users)",
              "status-json": "`biounlock status --json` (1,000 users)",
              "status-user-big": "`biounlock status daemon` (big store)", "list": "`biounlock list` (1,000 users)"}
    for k, v in rows.items():
        if k[0] != "cli":
            continue
        m = num(v, "median_us")
        w(f"| {labels.get(k[1], k[1])} | {ms2(m)} | {ms2(num(v, 'p90_us'))} | "
          f"{'–' if k[1] == 'true' else signed_ms(m - tr if m is not None and tr is not None else None)} | {v.get('errors')} |")
    cli_fact = next((l for l in raw if l.startswith("cli-json status_json_bytes")), None)
    if cli_fact:
        w("")
        w(f"`status --json` output: {cli_fact.split(' ', 1)[1]}. There is no `list` command yet "
          "(the script uses it when `biounlock list --help` succeeds).")
    w("")

    # ---------------------------------------------------------------- 6
    touch_rows = [(k[1], v) for k, v in rows.items() if k[0] == "touch" and "ready_median_us" in v]
    if touch_rows:
        tfact = R("touch", "fact")
        fv = tfact.get("fprintd_version", "?")
        w("## 6. A touch through fprintd, libfprint and pam_fprintd")
        w("")
        w(f"`bench/touch-bench`: one fprintd (Debian's {fv}) on a private bus, polkit mocked (python3-dbusmock), "
          "libfprint's virtual_device behind it; the same user's print made by `fprintd-enroll` (fprintd paths) and "
          "by `biounlock enrol` (libfprint path). Each transaction is a new process (`pam_start_confdir`, "
          "`pam_authenticate`, `pam_end`, as a sudo is one), the three paths interleaved round by round; the finger "
          "touches 100 ms after the touch request appears. fprintd was restarted every "
          f"{tfact.get('restart_every', '?')} transactions that reached it ({tfact.get('fprintd_restarts', '?')} restarts; "
          f"\"Device disabled to prevent overheating\" in its log: {tfact.get('overheating_messages', '?')} times). "
          "Times from `pam_start`:")
        w("")
        w("- *prompt*: the touch request shown; *verifying*: fprintd's answer to `VerifyStart` delivered "
          "(bench/bus-monitor, a monitor on the bus); *ready*: the later of the two (the libfprint path: the prompt, "
          "after which its helper starts libfprint's verification at once);")
        w("- *before*: the module's work before its helper starts (its first `posix_spawn`), or pam_fprintd's before "
          "it connects to the bus; both include loading the module in `pam_start`;")
        w("- *touch*: from the touch (the `SCAN` command written to the virtual device's socket) to "
          "`pam_authenticate` returning: the device's and fprintd's work, the same for both fprintd paths, and the "
          "client's; *match*: from fprintd's `VerifyStatus(\"verify-match\")` as the bus monitor (real-time priority) "
          "read it to the return -- the client's part alone, give or take the monitor's own delay; *work*: the "
          "transaction less the finger's wait (from `pam_start` to the return, less touch − prompt);")
        w("- peak RSS: the transaction's process (the caller: libpam, the module and what it loads) and its "
          "collected children (biounlock's helper; pam_fprintd has none).")
        w("")
        w("| path | ready median ms | p90 | prompt | verifying | before | touch → PAM_SUCCESS median ms | p90 | match → PAM_SUCCESS | work median ms | caller peak RSS MiB | helper peak RSS MiB | n | errors |")
        w("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        labels = {"bio-fprintd": "pam_biounlock `sensor=fprintd` (biounlock-fprintd → fprintd)",
                  "bio-libfprint": "pam_biounlock `sensor=libfprint` (biounlock-fprint → libfprint)",
                  "pam_fprintd": "pam_fprintd (sd-bus in the host → fprintd)"}

        def t(v, key):
            x = num(v, key)
            return "–" if x is None or x < 0 else ms2(x)

        def mib(v, key):
            x = num(v, key)
            return "–" if x is None or x <= 0 else f"{x / MIB:.1f}"
        for name, v in touch_rows:
            w(f"| {labels.get(name, name)} | {t(v, 'ready_median_us')} | {t(v, 'ready_p90_us')} | {t(v, 'prompt_median_us')} | "
              f"{t(v, 'verifying_median_us')} | {t(v, 'before_median_us')} | {t(v, 'touch_median_us')} | {t(v, 'touch_p90_us')} | "
              f"{t(v, 'match_median_us')} | {t(v, 'work_median_us')} | {mib(v, 'caller_rss_median_kib')} | "
              f"{mib(v, 'helper_rss_median_kib')} | {v.get('n')} | {v.get('errors')} |")
        w("")
        tf, tl, tp = R("touch", "bio-fprintd"), R("touch", "bio-libfprint"), R("touch", "pam_fprintd")
        ratios = []
        for key, what in (("ready_median_us", "ready"), ("touch_median_us", "touch → PAM_SUCCESS"), ("work_median_us", "work"),
                          ("caller_rss_median_kib", "caller's peak RSS")):
            a, b, c = num(tf, key), num(tl, key), num(tp, key)
            if None not in (a, b, c) and c > 0 and a >= 0:
                ratios.append(f"{what}: `sensor=fprintd` {a / c:.2f}×" + (f", `sensor=libfprint` {b / c:.2f}×" if b >= 0 else ""))
        if ratios:
            w("Ratios to pam_fprintd (medians, same run): " + "; ".join(ratios) + ".")
            w("")
        hs = [(k[1], v) for k, v in rows.items() if k[0] == "touch" and v.get("_kind") == "helper"]
        if hs:
            w("What the parts before the reader cost. A helper's start alone (`touch-latency helper-start`: spawned as "
              "the module spawns it -- `posix_spawn`, a clean environment, a socketpair on fd 3 -- until its greeting "
              "is read; the two interleaved):")
            w("")
            w("| helper | start → greeting median ms | p90 ms | n |")
            w("|---|---|---|---|")
            for name, v in hs:
                w(f"| {name} | {ms2(num(v, 'median_us'))} | {ms2(num(v, 'p90_us'))} | {v.get('n')} |")
            w("")
            w(f"`ldd` of biounlock-fprintd names {tfact.get('fprintd_helper_libraries', '?')} shared objects "
              f"({tfact.get('fprintd_helper_ldd', '?')}); of biounlock-fprint {tfact.get('fprint_helper_libraries', '?')}.")
            w("")
            if tf and tp:
                w(f"The module's work before its helper (*before*, from `pam_start`: loading the module, its options and "
                  f"config file, the account, the store and the user's row) took {t(tf, 'before_median_us')} ms, against "
                  f"{t(tp, 'before_median_us')} ms for pam_fprintd to load and reach its bus connection. After the helper "
                  "starts, `sensor=fprintd` asks the bus for fprintd's name and devices in the write that opens the "
                  "connection, then the user's fingers and the Claim at once, and starts the verification as soon as "
                  "the Claim is answered; pam_fprintd asks for the same one call after another, and reads the device's "
                  "scan type too.")
                w("")
        w("After a match `sensor=fprintd`'s helper answers the module at once and sends fprintd `Release` (no "
          "`VerifyStop`), which runs while the module records the success and its audit row (a durable commit, see "
          "section 1, and a syslog line); the module then returns on the helper's `closed`, which the helper sends "
          "once fprintd has answered `Release`. Release's answer means fprintd has closed the device, so the device "
          "is free before `pam_authenticate` returns (docs/DESIGN.md). The helper detached once fprintd verified "
          "(docs/DESIGN.md, \"Inside PAM the fprintd helper detaches\"): its exit is not waited for. pam_fprintd "
          "records nothing and leaves the release to fprintd noticing its disconnection. The libfprint helper "
          "closes the reader and exits, and the module collects it.")
        w("")
        a, b = num(tf, "touch_median_us"), num(tp, "touch_median_us")
        ma, mb = num(tf, "match_median_us"), num(tp, "match_median_us")
        if None not in (a, b, ma, mb) and a - b > 1000:
            w(f"**The touch target is missed in this run**: `sensor=fprintd` takes {signed_ms(a - b)} ms more than pam_fprintd "
              f"from the touch ({signed_ms(ma - mb)} ms from fprintd's match as the monitor saw it), against the 1 ms "
              "allowed. What the fprintd path does after the match that pam_fprintd does not: one more hop (fprintd's "
              "signal reaches the helper, whose answer reaches the module), and fprintd's answer to `Release` "
              "(fprintd authorizes the call first, on a worker thread), beside the module's own record of the success "
              "(a syslog line and one commit), which runs meanwhile; the longer of the two decides. pam_fprintd "
              "returns on the signal and leaves the release to fprintd's handling of its disconnection, which a "
              "client connected beforehand can overtake (docs/DESIGN.md); waiting for Release is what makes the "
              "device free before the transaction returns, and it is kept.")
            w("")
        elif None not in (a, b, ma, mb) and a - b > 800:
            p90 = num(tf, "touch_p90_us")
            w(f"**The touch target is met in this run, narrowly**: `sensor=fprintd` takes {signed_ms(a - b)} ms more than "
              f"pam_fprintd from the touch ({signed_ms(ma - mb)} ms from fprintd's match as the monitor saw it), "
              f"{(1000 - (a - b)) / 1000:.3f} ms inside the 1 ms allowed -- little beside the spread of this path's own "
              f"times (median {a / 1000:.2f} ms, p90 {p90 / 1000:.2f} ms), so a run on a busier machine may miss it. "
              "Most of the difference is fprintd's answer to `Release`, kept because it makes the device free before "
              "the transaction returns (above, and docs/DESIGN.md).")
            w("")

    # ---------------------------------------------------------------- notes
    if baseline:
        out.extend(CHANGES(facts, rows, baseline))
    w("## Notes on the results")
    w("")
    notes = NOTES(F, R, med, num, rows, facts, raw)
    for n_ in notes:
        w(n_)
        w("")
    w("## Raw output of this run")
    w("")
    w("```")
    out.extend(raw)
    w("```")
    print("\n".join(out))


def CHANGES(facts, rows, baseline):
    """What this cycle's changes bought: this run beside the baseline run (bench/baseline.raw)."""
    bfacts, brows, _ = baseline
    def pair(tag, name, key="median_us"):
        return num(brows.get((tag, name), {}), key), num(rows.get((tag, name), {}), key)
    def over(tag, a, b, key="median_us"):
        x0, x1 = pair(tag, a, key)
        y0, y1 = pair(tag, b, key)
        return (None if None in (x0, y0) else x0 - y0), (None if None in (x1, y1) else x1 - y1)
    def syncs(f):
        out = {}
        for l in f.get(("syncs", "lines"), []):
            d = dict(x.split("=", 1) for x in l.split(" "))
            out[d["case"]] = int(d["fdatasync_calls"]) / int(d["transactions"])
        return out
    def rss(f_rows, name):
        r, p = f_rows.get((name, "process"), {}), f_rows.get(("mem-permit", "process"), {})
        a, b = num(r, "maxrss_kib"), num(p, "maxrss_kib")
        return None if None in (a, b) else (a - b) / MIB
    def dlopen_named(f_rows, lib):
        return next((num(v, "median_us") for k, v in f_rows.items() if k[0] == "dlopen" and k[1].endswith(lib)), None)
    def dlopen1(f_rows):
        return next((num(v, "median_us") for k, v in f_rows.items() if k[0] == "dlopen1"), None)
    bs, ts = syncs(bfacts), syncs(facts)
    lines = []
    w = lines.append
    w("## What the changes bought")
    w("")
    w(f"This run beside the baseline: the last full run before this cycle's work on the module's cost, "
      f"`{bfacts.get(('machine', 'command'), '?')}` on {bfacts.get(('machine', 'date'), '?')} "
      "(its raw lines are kept in bench/baseline.raw; scripts/bench passes them to bench/report.py). Two runs on a "
      "shared machine: compare differences over pam_permit (each taken within its own run), not raw times.")
    (ab, at), (pb, pt) = pair("inslow", "argon2"), pair("inproc", "permit")
    if None not in (ab, at, pb, pt) and at > 0 and pt > 0:
        w("")
        w(f"How fast the machine ran in each: Argon2id alone at the shipped cost (pure CPU and memory) took {ms(ab)} ms in "
          f"the baseline and {ms(at)} ms in this run ({ab / at:.2f}×), a pam_permit transaction {ms(pb)} and {ms(pt)} ms "
          f"({pb / pt:.2f}×). The machine's speed changes from hour to hour with what else runs on its host, and every figure "
          "here, differences over pam_permit included, scales with it: a change is what is left once that is "
          "accounted for, and the interleaved A/B runs named in the last column (old and new code in the same loop) "
          "are what measured each one.")
    w("")
    w("| figure | baseline | this run | change | what changed it |")
    w("|---|---|---|---|---|")
    def row(label, b, t, fmt, why):
        change = "–" if None in (b, t) else fmt(t - b, signed=True)
        w(f"| {label} | {fmt(b)} | {fmt(t)} | {change} | {why} |")
    def f_ms(v, signed=False):
        return "–" if v is None else (f"{v / 1000:+.3f} ms" if signed else f"{v / 1000:.3f} ms")
    def f_n(v, signed=False):
        return "–" if v is None else (f"{v:+.1f}" if signed else f"{v:.1f}")
    def f_mib(v, signed=False):
        return "–" if v is None else (f"{v:+.2f} MiB" if signed else f"{v:.2f} MiB")
    def f_bytes(v, signed=False):
        return "–" if v is None else (f"{v:+,.0f} bytes" if signed else f"{v:,.0f} bytes")
    def f_int(s_):
        try:
            return float(s_)
        except (TypeError, ValueError):
            return None
    bn = bfacts.get(("linkage", "module_needed"), "")
    tn = facts.get(("linkage", "module_needed"), "")
    gone = [x for x in bn.split(",") if x and x not in tn.split(",")]
    w(f"| NEEDED of pam_biounlock.so | {bn} | {tn} | {('no longer: ' + ', '.join(gone)) if gone else 'same'} | "
      "the C++ runtime linked into the module (Package.swift, `link/libstdc++.so`), then the unwinder (`-static-libgcc`), then SQLite "
      "(`-l:libsqlite3.a`: docs/SECURITY.md, \"SQLite inside the module\") |")
    row("size of pam_biounlock.so", f_int(bfacts.get(("version", "module_size_bytes"))), f_int(facts.get(("version", "module_size_bytes"))),
        f_bytes, "libstdc++.a and libsqlite3.a linked in (larger); doctor, status and the reports moved to BiounlockAdmin, which only the CLI links, "
        "and the relative relocations packed (DT_RELR: 485 KiB of RELA entries become a 3.7 KB bitmap) (smaller)")
    row("dlopen of libstdc++.so.6 in a fresh process", dlopen_named(brows, "libstdc++.so.6"), dlopen_named(rows, "libstdc++.so.6"),
        f_ms, "not loaded any more (– in this run: the row is not measured when the module does not need it)")
    row("dlopen of libsqlite3.so.0 in a fresh process", dlopen_named(brows, "libsqlite3.so.0"), dlopen_named(rows, "libsqlite3.so.0"),
        f_ms, "not loaded any more: SQLite is linked into the module (– in this run: the row is not measured when the module does not need it)")
    row("dlopen of the module with its dependencies, alone", dlopen1(brows), dlopen1(rows), f_ms,
        "the C++ runtime, the unwinder and SQLite linked in (no libstdc++.so or libsqlite3.so to load and relocate, no libgcc_s.so whose constructor runs cpuid)")
    b, t = over("proc", "bio-off", "permit")
    row("whole process, not enabled, over pam_permit", b, t, f_ms, "mostly the C++ runtime and the unwinder linked in (less to load, relocate and initialise), and SQLite "
        "linked in (libsqlite3.so bound ~1,600 symbols at each load: about -0.45 ms); "
        "then less first-use work for the Swift runtime: no type-layout lowering in the module's targets (about -0.33 ms), the option "
        "table's origins a list and its texts made lazily, C strings validated without the generic decoder (together about -0.2 ms), "
        "packed relative relocations (-0.03 to -0.09 ms), no checkpoint attempt when a reader closes (-0.16 ms), the write set-up at the "
        "first write instead of at open (-0.13 ms); since the bench reads the shipped config file (see Module arguments), its "
        "durations parsed without a dictionary whose type a fresh process built at run time with a search of every conformance "
        "in the module (-0.3 ms) and its lines found on bytes, the static runtime's argv grabber (a constructor reading "
        "/proc/self/maps at every load) left out of the module (-0.03 to -0.08 ms), and _StringProcessing and _RegexParser (1.2 MB of code "
        "no target of the module uses) not linked in (-0.05 to -0.07 ms in three of four runs, -0.27 in a busier fourth), and SQLite's WAL index "
        "kept from the transaction before when it can be trusted instead of rebuilt by every sudo (WALIndexHold: -0.32 to -0.45 ms in four runs, "
        "a WAL of 27 frames): interleaved `pam-loop spawn` runs of each change, in the commit messages. Not in these figures, as the bench sets no PAM_RHOST: sudo sets it to the host name, and host names are now "
        "compared without building Set<String> (-0.07 ms per fresh sudo, measured with a driver that sets it)")
    b, t = over("inproc", "bio-off", "permit")
    row("in process, not enabled, over pam_permit", b, t, f_ms, "the same steps (arguments, one NSS lookup, trust checks, one indexed read), now through the system-call layer's wrappers and with the account binding's uid read, "
        "then -0.03 ms for the type-layout, option-table and C-string changes, +0.01 to +0.03 ms for rebuilding the WAL index from the frames "
        "writers now leave, -0.03 ms for the write set-up at the first write, about -0.05 ms for SQLite linked in (direct calls), "
        "about -0.09 ms for the config file's lines found on bytes instead of Characters (measured with the shipped config file, "
        "which the bench reads since then; with no config file, as in the baseline, the module logged a notice instead: "
        "about 0.03 ms less than reading the file now), -0.02 to -0.06 ms for the schema version checked in the first read "
        "transaction instead of one of its own, about -0.008 ms for the config file's lines cut as slices of its text (a comment makes no String; "
        "perf: the config's share of the transaction 7.4% -> 5.8%), nothing measurable for schema 5's column in the user's row "
        "(fprintd_prints; stores in the same state: 446 to 460 us against 454 to 481 us before), "
        "-0.06 to -0.13 ms for SQLite's WAL index kept from the transaction before (WALIndexHold: no truncation and regrowth of the -shm "
        "file, no replay of the WAL; six runs in both orders), and the config file read into a buffer of its own size with its comment lines "
        "passed over on the bytes (-113,000 of 919,000 user-space instructions, callgrind; below the noise of wall-clock runs) "
        "(interleaved in-process runs before and after each); "
        "not separated from the difference between two runs on this shared machine")
    b, t = over("inproc", "bio-pin-min", "argon2-min")
    row("passcode path over Argon2id (minimum-cost hash)", b, t, f_ms,
        "the in-flight lock and the durable count before the check (counted means checked), one sync fewer per count (the WAL only, not its directory); "
        "then the WAL left uncheckpointed at close until it is long (one checkpoint per few successes instead of one per success); "
        "then SQLite linked in (-0.06 to -0.11 ms), the success's audit row in the commit that clears the counters (one commit fewer), "
        "and a long WAL started again in place instead of truncated, so that a count's sync no longer allocates blocks for it "
        "(1.495 -> 1.265 ms in an interleaved in-process run); "
        "then schema 4 (the audit log's two unused indexes dropped: two pages fewer in each success's commit and in the next "
        "count's sync, -0.08 to -0.10 ms), SQLite configured without memory statistics or a bulk page-cache allocation per "
        "connection (about -0.04 ms), the prints not read unless a reader is opened (about -0.02 ms), the config file parsed "
        "on bytes and the schema version read in the first read transaction (see above); schema 5 neutral (1167 to 1207 us "
        "against 1168 to 1227 us before); then SQLite's WAL index kept from the transaction before (-0.07 to -0.15 ms, six runs in both "
        "orders) (interleaved in-process runs)")
    b, t = over("inproc", "bio-touch", "bio-off")
    row("touch over not enabled", b, t, f_ms, "the WAL left uncheckpointed at close until it is long: the close-time checkpoint's and the WAL restart's syncs once per few successes (see below); "
        "then two pages fewer in each success's commit (schema 4)")
    row("fdatasync per passcode transaction (strace)", bs.get("bio-pin-min"), ts.get("bio-pin-min"), f_n,
        "count synced outside the write lock (+1, SyncTargets), then its directory sync dropped (−1); the WAL checkpointed "
        "only when long (the checkpoint's syncs of the WAL, the directory and the store, and the restarted WAL's header, once per few transactions)")
    row("fdatasync per touch (strace)", bs.get("bio-touch"), ts.get("bio-touch"), f_n, "a commit no longer syncs (synchronous=NORMAL, with the write queue); only counts are synced, by their writer; "
        "the WAL checkpointed only when long")
    row("peak RSS over pam_permit, not enabled", rss(brows, "mem-off"), rss(rows, "mem-off"), f_mib, "the C++ runtime's pages are part of the module now; then the packed relocations "
        "(-0.4 MiB in a run of the module before and after: the dynamic linker no longer reads a 485 KiB table) and this cycle's later changes (-0.5 MiB more, not separated)")
    row("peak RSS over pam_permit, passcode (minimum-cost hash)", rss(brows, "mem-pinmin"), rss(rows, "mem-pinmin"), f_mib, "as above")
    w("")
    return lines


def NOTES(F, R, med, num, rows, facts, raw):
    notes = []
    permit_proc, off_proc, true_proc = med("proc", "permit"), med("proc", "bio-off"), med("proc", "true")
    dl = {k[1].split("/")[-1]: num(v, "median_us") for k, v in rows.items() if k[0] == "dlopen"}
    dl1 = next((num(v, "median_us") for k, v in rows.items() if k[0] == "dlopen1"), None)
    off_in, permit_in = med("inproc", "bio-off"), med("inproc", "permit")
    if off_proc is not None and permit_proc is not None and off_in is not None:
        d = off_proc - permit_proc
        parts = ", ".join(f"{k} {ms(v)} ms" for k, v in dl.items())
        notes.append(
            f"- **Whole process, user without biometric unlock: {signed_ms(d)} ms over pam_permit "
            f"({'within' if d <= 2000 else 'over'} the 2 ms target).** In a loop the same transaction costs "
            f"{signed_ms(off_in - permit_in)} ms over pam_permit, so the rest is what a fresh process pays once: "
            f"loading the module. Measured in this run, dlopen in a fresh process costs {parts} "
            f"(each after the previous ones), and {ms(dl1)} ms for the module with its dependencies alone. "
            "The rest of the difference is the first transaction's cold start in a new process: page faults on the "
            "module's code and data (most of them the copy-on-write of the pages the dynamic linker relocates: the "
            "statically linked Swift runtime's metadata), the Swift runtime's first use of each generic type (an array "
            "of a new element type, an Optional the standard library destroys through its value witnesses: the runtime "
            "builds that metadata from its mangled name, and the first time for arrays and for Optionals it also files "
            "every specialization the standard library ships), SQLite's and libsodium's initialisation, and a larger "
            "address space to tear down at exit. "
            "libsodium is loaded only for the module by hosts such as sudo that do not link it "
            "already, and the dynamic linker resolves every symbol reference in it (RTLD_NOW). The C++ runtime "
            "that the statically linked Swift runtime needs is linked into the module (libstdc++.a, its symbols "
            "hidden), and so are the unwinder (libgcc_eh, `-static-libgcc`) and SQLite (libsqlite3.a), so no "
            "libstdc++.so or libsqlite3.so is loaded and relocated for it and no libgcc_s.so initialised (its "
            "constructor probes the CPU with cpuid, slow under a hypervisor): see \"What the changes bought\".")
    if off_in is not None and permit_in is not None:
        notes.append(
            f"- **In process, user without biometric unlock: {signed_ms(off_in - permit_in)} ms over pam_permit "
            f"({ratio(off_in, permit_in)} its time).** Everything here is CPU (the CPU column matches the wall time): "
            "reading the arguments and the config file, the NSS lookup of the user, the trust checks on the store "
            "and its -wal/-shm files (stat), opening the store (SQLite maps the shared-memory index and parses the "
            "schema on every new connection: each sudo is a new connection) and one indexed read. No write and no "
            "sync: a user who has not enabled biometric unlock gets no audit row in the store, and the store's "
            "-wal/-shm files are kept between connections rather than created and deleted each time; the WAL index the "
            "last transaction left is used as it is when it can be trusted (built in this boot, describing the WAL "
            "exactly: docs/DESIGN.md), instead of SQLite truncating the -shm file and replaying the WAL for every new "
            "process. All figures on this page scale with the load of the machine "
            "(see Machine): the margin to 0.5 ms is what it is under that load.")
    pin, argon = med("inslow", "bio-pin"), med("inslow", "argon2")
    pinmin, argonmin = med("inproc", "bio-pin-min"), med("inproc", "argon2-min")
    touch, off = med("inproc", "bio-touch"), med("inproc", "bio-off")
    syncs = {}
    for l in facts.get(("syncs", "lines"), []):
        d = dict(x.split("=", 1) for x in l.split(" "))
        syncs[d["case"]] = int(d["fdatasync_calls"]) / int(d["transactions"])
    fs = R("fsync", "fdatasync")
    if None not in (pin, argon, pinmin, argonmin, touch, off):
        txt = (f"- **Passcode path.** At the shipped cost the transaction takes {ms(pin)} ms against {ms(argon)} ms for "
               f"Argon2id alone ({signed_ms(pin - argon)} ms); both vary by several ms from round to round on this "
               f"shared machine, so the minimum-cost hash gives the precise figure for everything but Argon2id: "
               f"{signed_ms(pinmin - argonmin)} ms ({ms(pinmin)} − {ms(argonmin)}). The touch path pays the same writes: "
               f"{ms(touch)} ms against {ms(off)} ms for a user who only reads. What costs is durability: a success resets "
               "the counters and appends its audit row in one commit (SQLite in WAL mode, `synchronous=NORMAL`: a commit "
               "does not sync); a passcode attempt is counted and that count synced (the WAL) before the guess is "
               "checked, so that a power cut cannot undo a wrong guess. The module's connections leave their writes in "
               "the WAL when they close; the one that closes after writing to a WAL holding more than 24 frames checkpoints it "
               "into the store (SQLite syncs the WAL, the store's directory and the store) and starts the WAL again in place "
               "(one write, whose header SQLite syncs): those syncs come once per few successes, not with each, and the WAL "
               "keeps its length, so a count's sync writes blocks the file has (Store.keepJournalFiles)")
        if syncs and fs:
            txt += (f". strace counted {syncs.get('bio-pin-min', 0):.1f} fdatasync calls per passcode transaction, "
                    f"{syncs.get('bio-touch', 0):.1f} per touch and {syncs.get('bio-off', 0):.1f} for a user without "
                    f"biometric unlock; one fdatasync of 4 KiB on this filesystem took {ms(num(fs, 'median_us'))} ms "
                    f"(median, p90 {ms(num(fs, 'p90_us'))} ms) in this run, so the syncs alone come to about "
                    f"{syncs.get('bio-pin-min', 0) * num(fs, 'median_us') / 1000:.2f} ms")
        cp, co = num(R("inproc", "bio-pin-min"), "cpu_median_us"), num(R("inproc", "bio-off"), "cpu_median_us")
        if cp is not None and co is not None:
            txt += (f". In CPU time the passcode path (minimum-cost hash) costs {signed_ms(cp - co)} ms more than the "
                    "read-only path of a user without biometric unlock; on this machine most of that is kernel work for "
                    f"the writes (the filesystem's journal: {F('machine', 'fs_journal')}, so fdatasync writes the data and "
                    "the inode from the calling thread) and SQLite writing and checkpointing the frames")
        w0, w5, w20 = (num(R("walrec", f"frames-{k}"), "median_us") for k in (0, 5, 20))
        if None not in (w0, w5, w20):
            txt += (". What the frames left in the WAL cost a connection that finds no other one open and rebuilds "
                    "the WAL index from them -- since the module keeps the index between transactions, only the first "
                    "sudo after a boot or after the CLI removed the WAL, or one that finds the index untrustworthy: "
                    f"opening a store, one indexed read and closing took {ms(w0)} ms with an empty WAL, {ms(w5)} ms with "
                    f"5 frames and {ms(w20)} ms with 20 in this run (bench/wal-recovery.c, plain SQLite)")
        notes.append(txt + ".")
    scale_lines = [l for l in facts.get(("store", "lines"), []) if not l.startswith("fill")]
    if scale_lines:
        notes.append(
            "- **Scale.** The module reads one user by primary key (users, service_overrides and templates by "
            "user) and appends to `events` (a B-tree by id; no secondary index since schema 4): cost grows with the "
            "tree depth, not the row count. The stores were in the page cache (just written), as a busy machine's store would be.")
    ev = [l for l in raw if l.startswith("conc-audit case=")]
    if ev:
        notes.append(
            "- **Concurrency.** With 64 processes on 2 cores, the per-transaction latency is mostly waiting for a "
            "core. Writers queue on the store's write queue (byte 0 of `STORE-lock`, polled every 1-2 ms, bounded "
            "at 10 s) before SQLite's write lock, so no writer waits out SQLite's busy timeout while newcomers "
            "overtake it. A write that still could not be made would be dropped and logged while the decision "
            "stands (a success's counter reset and audit row go together, so a dropped one leaves the counters as "
            "they were: the safe side); the columns \"audit rows written / expected\" and \"errors the module "
            "logged\" count exactly that. Reads (bio-off) do not queue in WAL mode.")
    wa = next((l for l in raw if l.startswith("conc-wrong-audit ")), None)
    wrong = R("conc-wrong", "wrong-pin")
    if wa and wrong:
        d = dict(x.split("=", 1) for x in wa.split(" ")[1:])
        if int(d["verified_wrong"]) > int(d["lockout_threshold"]):
            notes.append(
                f"- **Finding: the passcode lockout does not hold against concurrent attempts.** {wrong.get('procs')} wrong "
                f"PINs started at once were all checked against the hash ({d['verified_wrong']} verified, "
                f"{d['refused_locked']} refused) although `passcode_lockout` is {d['lockout_threshold']}; the counter "
                f"ended at {d['counter']}. The chain decides \"locked\" from the user's row as read at the start of the "
                "transaction and counts a wrong passcode only after Argon2id, so every transaction that starts before "
                "the first failure is counted gets a full guess: the lockout allows as many guesses as an attacker can "
                "run transactions at once (e.g. parallel `su` on several terminals), then again after each wait. A fix "
                "is to count the attempt atomically before verifying (one UPDATE … RETURNING that also refuses when "
                "the lockout is in force) and to clear it on success; it belongs to the policy chain and its tests, "
                "not to this benchmark, and is not made here.")
    sj, su_ = med("cli", "status-json"), med("cli", "status-user")
    if sj is not None and su_ is not None:
        notes.append(
            f"- **CLI.** `status USER` ({ms2(su_)} ms) is a process start, opening the store and three queries. "
            f"`status --json` for 1,000 users takes {ms2(sj)} ms: it reads every user with its own read transaction "
            "and three queries (one per table). Fine for an admin command; a `list` command should read the users "
            "with one query per table.")
    fl = facts.get(("finger", "lines"), [])
    if fl:
        notes.append(f"- The simulated finger reported: {fl[0]}.")
    notes.append(
        "- The store lives on the machine's root filesystem (see Machine). This machine has no syslog socket "
        "(`/dev/log`), so each line the module logs (one per passcode or touch success) costs a failed "
        "`connect`.")
    return notes


if __name__ == "__main__":
    main()
