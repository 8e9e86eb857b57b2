"""A ``conda`` stand-in on py-rattler: the subcommands the product calls, with conda 26.7's
output shapes and exit codes (contract-tested against tests/unit/fixtures/shared/fixtures/conda-26.7).

Test bed only: real conda cannot be installed on the project's machines. Behaviours kept on
purpose because real conda has them: ``env create`` over an existing environment silently
deletes and recreates it; ``nodefaults`` is a channel name like any other (and fails); the
``pip:`` section runs as ``<prefix>/bin/python -m pip install -U -r <env.yml dir>/condaenv.*.requirements.txt``.
Solving uses rattler's solver, so solutions may differ from conda's classic solver where several
are valid; error messages are rebuilt in conda's words for the recorded cases.
"""

import argparse
import base64
import datetime
import hashlib
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse

import yaml

from .config import SUBDIRS, TOS_CHANNEL_PREFIX, Config, CondaConfigError, first_writable

CONDA_VERSION = "26.7.1"
# Solvers conda itself has (built from source, as recorded: --solver {classic,rattler}); plugins add more.
BUILTIN_SOLVERS = ("classic", "rattler")


def installed_plugins():
    """The conda plugins installed beside this conda, as conda finds them (entry points of the "conda"
    group; plugins/manager.py): the distributions in its site-packages that declare one. The stand-in
    installer lays down Miniconda's two (conda_libmamba_solver, conda_anaconda_tos)."""
    site = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    found = set()
    for name in os.listdir(site) if os.path.isdir(site) else []:
        entry_points = os.path.join(site, name, "entry_points.txt")
        if name.endswith(".dist-info") and os.path.isfile(entry_points):
            with open(entry_points) as handle:
                if "[conda]" in handle.read().split():
                    found.add(name.split("-")[0])
    return found


def solvers():
    return BUILTIN_SOLVERS + (("libmamba",) if "conda_libmamba_solver" in installed_plugins() else ())


# Test hook, not a conda setting: pause a transaction halfway so a test can kill it (pause_midway).
PAUSE_FILE_VARIABLE = "CONDA_TESTBED_PAUSE_FILE"
# conda renames what it unlinks to this suffix and deletes the backups at the end of the transaction
BACKUP_SUFFIX = ".c~"
NOTHING_TO_DO = "All requested packages already installed."
ANACONDA_ORG_HINT = ("To search for alternate channels that may provide the conda package you're\n"
                     "looking for, navigate to\n\n    https://anaconda.org\n\nand use the search bar at the top of the page.\n")
ACTIVATION_HINT = ("#\n# To activate this environment, use\n#\n#     $ conda activate %s\n#\n"
                   "# To deactivate an active environment, use\n#\n#     $ conda deactivate\n\n")
UNSAT_GUIDANCE = {
    "cause": "Some requested packages have conflicting version constraints",
    "hint_codes": ["review_conflicting_specs", "channel_priority_flexible", "check_pinned_packages", "update_conda"],
    "hints": [
        {"hint_code": "review_conflicting_specs",
         "text": "Review the conflicting specifications above and adjust version ranges or package names."},
        {"hint_code": "channel_priority_flexible",
         "text": "Strict channel priority is enabled. Try flexible priority:\n      conda config --set channel_priority flexible"},
        {"hint_code": "check_pinned_packages",
         "text": "Check for pinned packages:\n      conda config --show pinned_packages"},
        {"hint_code": "update_conda", "text": "Update conda and try again:\n      conda update conda"},
    ],
    "summary": "Conda could not find a compatible set of packages to satisfy the requested specifications.",
}


class CondaError(Exception):
    """An error conda reports with ``exception_name`` and exit code 1."""

    def __init__(self, name, message, **fields):
        super().__init__(message)
        self.name = name
        self.message = message
        self.fields = fields

    def as_json(self):
        data = {"caused_by": "None", "error": "%s: %s" % (self.name, self.message), "exception_name": self.name,
                "exception_type": getattr(self, "exception_type", "<class 'conda.exceptions.%s'>" % self.name),
                "message": self.message}
        data.update(self.fields)
        return data


# ---------------------------------------------------------------------------------------------
# output helpers

class Out:
    def __init__(self, as_json, quiet=False):
        self.json = as_json
        self.quiet = quiet

    def text(self, line=""):
        if not self.json and not self.quiet:
            sys.stdout.write(line + "\n")

    def step(self, what, result="done"):
        self.text("%s: ...working... %s" % (what, result))

    def emit_json(self, data):
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=False))
        sys.stdout.write("\n")


def match_spec_text(spec):
    """A MatchSpec the way conda prints it in errors: ``libfoo[version='>=2']``."""
    from rattler import MatchSpec

    parsed = MatchSpec(str(spec)) if not hasattr(spec, "name") else spec
    name = parsed.name.normalized if parsed.name else str(spec)
    version = str(parsed.version) if parsed.version else None
    if not version:
        return name
    if version.endswith(".*") and not any(c in version for c in "<>,|!"):
        return "%s=%s" % (name, version[:-2])
    if version.startswith("==") and "," not in version:
        return "%s%s" % (name, version)
    return "%s[version='%s']" % (name, version)


def entry(record, config):
    base_url = str(record.channel).rstrip("/")
    return {"base_url": base_url, "build_number": record.build_number, "build_string": str(record.build),
            "channel": config.canonical_name(base_url), "dist_name": dist_name(record),
            "name": record.name.normalized, "platform": record.subdir, "version": str(record.version)}


def dist_name(record):
    return "%s-%s-%s" % (record.name.normalized, record.version, record.build)


def fetch_entry(record):
    noarch = None
    if record.noarch and (record.noarch.generic or record.noarch.python):
        noarch = "generic" if record.noarch.generic else "python"
    return {"name": record.name.normalized, "version": str(record.version), "build": str(record.build),
            "build_number": record.build_number, "channel": str(record.channel).rstrip("/") + "/" + record.subdir,
            "subdir": record.subdir, "fn": record.file_name, "md5": record.md5.hex() if record.md5 else None,
            "url": record.url, "sha256": record.sha256.hex() if record.sha256 else None, "arch": record.arch,
            "platform": record.platform, "depends": list(record.depends), "constrains": list(record.constrains),
            "noarch": noarch, "license": record.license, "package_type": "noarch_%s" % noarch if noarch else None,
            "timestamp": int(record.timestamp.timestamp() * 1000) if record.timestamp else None, "size": record.size}


# ---------------------------------------------------------------------------------------------
# prefixes, environments, history

class Context:
    def __init__(self, root):
        self.root = root
        self.config = Config(root)

    @property
    def environments_txt(self):
        return os.path.expanduser("~/.conda/environments.txt")

    def registered(self):
        found = []
        for envs_dir in self.config.envs_dirs:
            if os.path.isdir(envs_dir):
                for name in sorted(os.listdir(envs_dir)):
                    path = os.path.join(envs_dir, name)
                    if is_env(path) and path not in found:
                        found.append(path)
        if os.path.exists(self.environments_txt):
            with open(self.environments_txt) as handle:
                for line in handle:
                    path = line.strip()
                    if path and is_env(path) and path not in found and path != self.root:
                        found.append(path)
        return found + [self.root]

    def register(self, prefix):
        if os.path.dirname(prefix) in self.config.envs_dirs or prefix == self.root:
            return
        known = []
        if os.path.exists(self.environments_txt):
            with open(self.environments_txt) as handle:
                known = [line.strip() for line in handle if line.strip()]
        if prefix not in known:
            os.makedirs(os.path.dirname(self.environments_txt), exist_ok=True)
            with open(self.environments_txt, "a") as handle:
                handle.write(prefix + "\n")

    def unregister(self, prefix):
        if os.path.exists(self.environments_txt):
            with open(self.environments_txt) as handle:
                known = [line.strip() for line in handle if line.strip() and line.strip() != prefix]
            with open(self.environments_txt, "w") as handle:
                handle.write("".join(k + "\n" for k in known))

    def prefix_for(self, name=None, path=None, must_exist=False):
        if path:
            prefix = os.path.abspath(os.path.expanduser(path))
        elif name in (None, "base"):
            prefix = self.root if name == "base" or not name else None
        else:
            prefix = None
            for envs_dir in self.config.envs_dirs:
                candidate = os.path.join(envs_dir, name)
                if os.path.isdir(candidate):
                    prefix = candidate
                    break
            if prefix is None:
                if must_exist:
                    raise CondaError("EnvironmentLocationNotFound", "Not a conda environment: %s" % os.path.join(
                        self.config.envs_dirs[0], name), location=os.path.join(self.config.envs_dirs[0], name))
                prefix = os.path.join(self.writable_dir("envs"), name)
        if prefix is None:
            prefix = os.environ.get("CONDA_PREFIX") or self.root
        if must_exist and not os.path.isdir(prefix):
            raise CondaError("EnvironmentLocationNotFound", "Not a conda environment: %s" % prefix, location=prefix)
        if must_exist and not is_env(prefix):
            raise not_an_env(prefix)
        return prefix

    def env_details(self, prefix):
        meta = os.path.join(prefix, "conda-meta")
        history = os.path.join(meta, "history")

        def stamp(path):
            return datetime.datetime.fromtimestamp(os.stat(path).st_mtime, datetime.timezone.utc).isoformat() \
                if os.path.exists(path) else None

        return {"name": "base" if prefix == self.root else os.path.basename(prefix),
                "created": None if prefix == self.root else stamp(os.path.join(meta, "created")),
                "last_modified": stamp(history) or stamp(meta), "active": os.environ.get("CONDA_PREFIX") == prefix,
                "base": prefix == self.root, "frozen": os.path.exists(os.path.join(meta, "frozen")),
                "writable": os.access(prefix, os.W_OK)}

    # conda's magic file in each kind of folder, and the error when none of them is writable.
    WRITABLE = {"envs": (".conda_envs_dir_test", "NoWritableEnvsDirError"),
                "pkgs": ("urls.txt", "NoWritablePkgsDirError")}

    def writable_dir(self, kind):
        """Where a new environment named on the command line goes (``envs``), or the package cache this
        process downloads into (``pkgs``): the first of conda's folders of that kind that is writable,
        made with conda's magic file if need be."""
        folders = getattr(self.config, kind + "_dirs")
        magic, error = self.WRITABLE[kind]
        found = first_writable(folders, magic)
        if found is None:
            raise CondaError(error, "No writeable %s directories configured.\n  - %s" % (kind, "\n  - ".join(folders)),
                             **{kind + "_dirs": folders})
        return found


def not_an_env(prefix):
    """Conda's refusal of a folder without conda-meta/history (exceptions.DirectoryNotACondaEnvironmentError)."""
    return CondaError("DirectoryNotACondaEnvironmentError",
                      "The target directory exists, but it is not a conda environment.\n"
                      "Use 'conda create' to convert the directory to a conda environment.\n"
                      "  target directory: %s\n" % prefix, target_directory=prefix)


def is_env(prefix):
    """Conda's own test (PrefixData.is_environment): conda-meta/history, which it writes last."""
    return os.path.isfile(os.path.join(prefix, "conda-meta", "history"))


def installed_records(prefix):
    from rattler import PrefixRecord

    meta = os.path.join(prefix, "conda-meta")
    if not os.path.isdir(meta):
        return []
    return [PrefixRecord.from_path(os.path.join(meta, n)) for n in sorted(os.listdir(meta)) if n.endswith(".json")]


def history_specs(prefix):
    """The requested specs as conda's history file records them: {name: spec}."""
    from rattler import MatchSpec

    specs = {}
    path = os.path.join(prefix, "conda-meta", "history")
    if not os.path.exists(path):
        return specs
    with open(path) as handle:
        for line in handle:
            for marker, add in (("# update specs: ", True), ("# remove specs: ", False), ("# neutered specs: ", None)):
                if line.startswith(marker):
                    for spec in yaml.safe_load(line[len(marker):]) or []:
                        name = MatchSpec(spec).name.normalized
                        if add:
                            specs[name] = spec
                        elif add is False:
                            specs.pop(name, None)
    return specs


def write_history(prefix, argv, linked, unlinked, update_specs=(), remove_specs=()):
    meta = os.path.join(prefix, "conda-meta")
    os.makedirs(meta, exist_ok=True)
    if not os.path.exists(os.path.join(meta, "created")):
        open(os.path.join(meta, "created"), "w").close()
    lines = ["==> %s <==" % time.strftime("%Y-%m-%d %H:%M:%S"), "# cmd: %s" % " ".join(argv),
             "# conda version: %s" % CONDA_VERSION]
    lines += ["-%s" % d for d in unlinked] + ["+%s" % d for d in linked]
    if update_specs:
        lines.append("# update specs: %s" % json.dumps(list(update_specs)))
    if remove_specs:
        lines.append("# remove specs: %s" % json.dumps(list(remove_specs)))
    with open(os.path.join(meta, "history"), "a") as handle:
        handle.write("\n".join(lines) + "\n")


def site_packages(prefix):
    lib = os.path.join(prefix, "lib")
    if os.path.isdir(lib):
        for name in sorted(os.listdir(lib)):
            if name.startswith("python3"):
                path = os.path.join(lib, name, "site-packages")
                if os.path.isdir(path):
                    return path
    return None


def pypi_packages(prefix, records=None):
    """Packages pip installed (dist-info folders that no conda package owns): [(name, version)]."""
    site = site_packages(prefix)
    if not site:
        return []
    owned = set()
    for record in installed_records(prefix) if records is None else records:
        for path in record.files:
            parts = str(path).split("/")
            for part in parts:
                if part.endswith(".dist-info"):
                    owned.add(part)
    found = []
    for name in sorted(os.listdir(site)):
        if name.endswith(".dist-info") and name not in owned:
            stem = name[: -len(".dist-info")]
            dist, _sep, version = stem.rpartition("-")
            found.append((dist.lower().replace("_", "-"), version))
    return found


def topological(records):
    """Dependencies before their dependents (conda's LINK order), ties by name."""
    from rattler import MatchSpec

    by_name = {r.name.normalized: r for r in records}
    ordered, seen = [], set()

    def visit(record):
        name = record.name.normalized
        if name in seen:
            return
        seen.add(name)
        for dep in record.depends:
            dep_name = MatchSpec(dep).name.normalized
            if dep_name in by_name:
                visit(by_name[dep_name])
        ordered.append(record)

    for name in sorted(by_name):
        visit(by_name[name])
    return ordered


# ---------------------------------------------------------------------------------------------
# channels: fetch repodata, solve

def _request(url):
    """A request for ``url`` as conda sends it: a user:password in the URL goes as HTTP basic
    authentication (conda's CondaHttpAuth), never as part of the host name."""
    import urllib.request  # here, as asyncio below: only the commands that fetch pay for the import

    parts = urllib.parse.urlsplit(url)
    if parts.username is None:
        return urllib.request.Request(url)
    request = urllib.request.Request(_without_credentials(url))
    credentials = "%s:%s" % (urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or ""))
    request.add_header("Authorization", "Basic " + base64.b64encode(credentials.encode("utf-8")).decode("ascii"))
    return request


def _without_credentials(url):
    parts = urllib.parse.urlsplit(url)
    if parts.username is None:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.hostname + (":%d" % parts.port if parts.port else "")))


class Channels:
    def __init__(self, ctx, names, out, offline=False):
        self.ctx = ctx
        self.urls = ctx.config.expand_channels(names)
        self.out = out
        self.offline = offline or ctx.config.offline
        self.sources = []
        self.records = {}

    def check_tos(self):
        if self.ctx.config.auto_accept_tos or "conda_anaconda_tos" not in installed_plugins():
            return
        accepted = tos_accepted(self.ctx)
        missing = [u for u in self.urls if u.startswith(TOS_CHANNEL_PREFIX) and u not in accepted]
        if missing:
            raise CondaError("CondaToSNonInteractiveError",
                             "Terms of Service have not been accepted for the following channels. Please accept or "
                             "remove them before proceeding:\n" + "".join("    - %s\n" % u for u in missing)
                             + "\nTo accept these channels' Terms of Service, run the following commands:\n"
                             + "".join("    conda tos accept --override-channels --channel %s\n" % u for u in missing),
                             channel_urls=missing)

    def save_repodata_cache(self, base, subdir, raw):
        """conda's repodata cache in the first writable package cache: ``cache/<md5>.json`` and its state
        ``<md5>.info.json``, whose ``url`` is the channel's URL with its user:password (gateways/repodata/
        __init__.py: CondaRepoInterface.repodata saves ``{"_url": self._url}``, the ``url_w_credentials``
        it was made with, and RepodataState stores ``_url`` as ``url``; cache_fn_url names the file)."""
        folder = first_writable(self.ctx.config.pkgs_dirs, "urls.txt")
        if folder is None:
            return
        url = "%s/%s" % (base, subdir)
        stem = hashlib.md5((url + "/").encode("utf-8"), usedforsecurity=False).hexdigest()[:8]
        os.makedirs(os.path.join(folder, "cache"), exist_ok=True)
        with open(os.path.join(folder, "cache", stem + ".json"), "wb") as handle:
            handle.write(raw)
        with open(os.path.join(folder, "cache", stem + ".info.json"), "w") as handle:
            json.dump({"url": url, "mod": "", "etag": "", "cache_control": "", "size": len(raw)}, handle, indent=2)
        # core/subdir_data.py, SubdirData._pickle_me: the parsed state, "url_w_credentials" and
        # "base_url_w_credentials" among it, pickled to <md5>.q (conda does it when it reads a fresh cache).
        with open(os.path.join(folder, "cache", stem + ".q"), "wb") as handle:
            pickle.dump({"url_w_credentials": url, "base_url_w_credentials": url, "fn": "repodata.json"}, handle)

    def _get(self, url):
        import urllib.request

        retries = int(self.ctx.config.get("remote_max_retries", 3))
        timeout = float(self.ctx.config.get("remote_read_timeout_secs", 60.0))
        last = None
        for _attempt in range(max(retries, 0) + 1):
            try:
                with urllib.request.urlopen(_request(url), timeout=timeout) as response:  # nosec: test bed
                    return response.read()
            except urllib.error.HTTPError as exc:
                if exc.code == 404 or exc.code < 500:
                    raise
                last = exc
            except (urllib.error.URLError, OSError) as exc:
                if url.startswith("file:"):
                    raise
                last = exc
        raise last

    def first_reads(self, base, subdir):
        """What conda 26 fetches before the packages (repodata_fns; gateways/repodata/zstd.py):
        current_repodata.json then repodata.json, each as ``.zst`` first, falling back to the plain
        file on a 4xx other than 416; current_repodata.json may be missing. Any other failure raises
        (HTTPError). The stand-in has no zstd decoder, so it reads the packages from the plain
        repodata.json afterwards: the HTTP answers are conda's, the bytes parsed are not."""
        for name in ("current_repodata.json", "repodata.json"):
            url = "%s/%s/%s.zst" % (base, subdir, name)
            try:
                self._get(url)
            except urllib.error.HTTPError as exc:
                if not (400 <= exc.code < 500 and exc.code != 416):
                    raise
                try:
                    self._get(url[: -len(".zst")])
                except urllib.error.HTTPError as plain:
                    if not (plain.code == 404 and name == "current_repodata.json"):
                        raise

    def load(self):
        from rattler import Channel, ChannelConfig, SparseRepoData

        self.check_tos()
        self.workdir = tempfile.mkdtemp(prefix="conda-standin-repodata-")
        for index, base in enumerate(self.urls):
            if self.offline and not base.startswith("file:"):
                continue
            channel = Channel(base + "/", ChannelConfig())
            for subdir in SUBDIRS:
                url = "%s/%s/repodata.json" % (base, subdir)
                try:
                    if not base.startswith("file:"):
                        self.first_reads(base, subdir)
                    raw = self._get(url)
                except urllib.error.HTTPError as exc:
                    if exc.code == 404 and subdir == "noarch":
                        raise unavailable(base, 404, exc.reason)
                    if exc.code == 404:
                        continue
                    raise http_error(exc.filename or url, exc.code, str(exc.reason).upper(), base)
                except (urllib.error.URLError, OSError) as exc:
                    if base.startswith("file:"):
                        if subdir == "noarch":
                            raise unavailable(base, 404, "UNAVAILABLE OR INVALID")
                        continue
                    raise http_error(url, "000", "CONNECTION FAILED", base, caused_by=repr(exc))
                try:
                    data = json.loads(raw)
                    if not isinstance(data, dict):
                        raise ValueError("repodata is not a JSON object")
                except ValueError as exc:
                    raise CondaError("JSONDecodeError", "Unable to read repodata from %s: %s" % (url, exc), url=url)
                if self.ctx.config.get("add_pip_as_python_dependency", True):
                    # core/subdir_data.py: python 2.x and 3.x depend on pip, unless the setting is off.
                    for table in ("packages", "packages.conda"):
                        for rec in (data.get(table) or {}).values():
                            if rec.get("name") == "python" and str(rec.get("version", "")).startswith(("2.", "3.")):
                                rec["depends"] = list(rec.get("depends") or []) + ["pip"]
                    raw = json.dumps(data).encode()
                self.save_repodata_cache(base, subdir, raw)
                path = os.path.join(self.workdir, "%d-%s.json" % (index, subdir))
                with open(path, "wb") as handle:
                    handle.write(raw)
                self.sources.append(SparseRepoData(channel, subdir, path))
                for table in ("packages", "packages.conda"):
                    for fn, rec in (data.get(table) or {}).items():
                        self.records.setdefault(rec.get("name"), []).append((base, subdir, fn, rec))
        return self

    def close(self):
        shutil.rmtree(getattr(self, "workdir", ""), ignore_errors=True)

    def formatted(self):
        return ["%s/%s" % (u, s) for u in self.urls for s in SUBDIRS if not self.offline or u.startswith("file:")]

    def not_found(self, specs):
        data = {"channel_urls": self.formatted(),
                "channels_formatted": "".join("\n  - %s" % u for u in self.formatted()),
                "packages": specs, "packages_formatted": "".join("\n  - %s" % s for s in specs)}
        message = ("The following packages are not available from current channels:\n\n%s\n\nCurrent channels:\n\n%s\n\n%s"
                   % ("\n".join("  - %s" % s for s in specs), "\n".join("  - %s" % u for u in self.formatted()),
                      ANACONDA_ORG_HINT))
        return CondaError("PackagesNotFoundInChannelsError", message, **data)


def unavailable(base, code, reason):
    name = base.rsplit("/", 1)[-1]
    message = ("HTTP %s %s for channel %s <%s>\n\nThe channel is not accessible or is invalid.\n\n"
               "You will need to adjust your conda configuration to proceed.\n"
               "Use `conda config --show channels` to view your configuration's current state,\n"
               "and use `conda config --show-sources` to view config file locations.\n" % (code, reason, name, base))
    return CondaError("UnavailableInvalidChannel", message, channel_name=name, channel_url=base, status_code=code)


def http_error(url, code, reason, base, caused_by="None"):
    message = ("HTTP %s %s for url <%s>\nElapsed: -\n\nAn HTTP error occurred when trying to retrieve this URL.\n"
               "HTTP errors are often intermittent, and a simple retry will get you on your way.\n'%s'\n"
               % (code, reason, url, base))
    error = CondaError("CondaHTTPError", message, elapsed_time="-", json={}, reason=reason, response_details="",
                       status_code=str(code), url=url)
    error.fields["caused_by"] = caused_by
    return error


def virtual_packages():
    from rattler import VirtualPackage, VirtualPackageOverrides

    return VirtualPackage.detect(VirtualPackageOverrides.from_env())


def explain_failure(channels, specs):
    """Rebuild conda's error for an unsolvable request: missing packages first, then conflicts."""
    from rattler import MatchSpec

    from rattler import Version, VersionSpec

    virtual = {str(v.into_generic().name.normalized): str(v.into_generic().version) for v in virtual_packages()}

    def available(spec):
        if spec.name.normalized.startswith("__"):
            version = virtual.get(spec.name.normalized)
            return version is not None and (spec.version is None or VersionSpec(str(spec.version)).matches(Version(version)))
        return any(_matches(spec, rec) for rec in candidates(spec.name.normalized))

    def candidates(name):
        return [rec for (_b, _s, _f, rec) in channels.records.get(name, [])]

    missing, seen = [], set()

    def walk(spec):
        key = str(spec)
        if key in seen:
            return
        seen.add(key)
        if not available(spec):
            text = match_spec_text(spec)
            if text not in missing:
                missing.append(text)
            return
        for rec in candidates(spec.name.normalized):
            if _matches(spec, rec):
                for dep in rec.get("depends", []):
                    walk(MatchSpec(dep))

    parsed = [MatchSpec(s) for s in specs]
    for spec in parsed:
        walk(spec)
    if missing:
        return channels.not_found(missing)
    # conflicts: a package constrained both by a requested spec and by a requested package's dependency
    pairs = []
    for spec in parsed:
        for other in parsed:
            if other is spec:
                continue
            for rec in candidates(other.name.normalized):
                for dep in rec.get("depends", []):
                    dep_spec = MatchSpec(dep)
                    # a conflict only where no package satisfies both (python -> pip and pip are no conflict)
                    if dep_spec.name.normalized == spec.name.normalized and not any(
                            _matches(dep_spec, cand) and _matches(spec, cand) for cand in candidates(spec.name.normalized)):
                        pair = [str(other.name.normalized), match_spec_text(dep_spec)]
                        if pair not in pairs:
                            pairs.append(pair)
                            pairs.append([match_spec_text(spec)])
    name = pairs[0][1].split("[")[0].split("=")[0] if pairs else ""
    lines = "\n".join(" -> ".join(p) for p in pairs)
    message = ("The following specifications were found to be incompatible with each other:\n\n"
               "Output in format: Requested package -> Available versions\n\nPackage %s conflicts for:\n%s\n"
               "Note that strict channel priority may have removed packages required for satisfiability." % (name, lines))
    return CondaError("UnsatisfiableError", message, guidance=UNSAT_GUIDANCE, unsatisfiable=pairs)


def _matches(spec, rec):
    """Whether a repodata entry satisfies a spec's name and version (enough to explain a failure)."""
    from rattler import Version, VersionSpec

    return rec.get("name") == spec.name.normalized and (
        spec.version is None or VersionSpec(str(spec.version)).matches(Version(rec["version"])))


def solve(channels, specs, locked=(), solver=None):
    import asyncio
    import rattler
    from rattler import MatchSpec

    # plugins/manager.py get_solver_backend: the solver asked, else .condarc's, else conda's default.
    chosen = (solver or channels.ctx.config.get("solver") or "libmamba").lower().strip()
    if chosen not in solvers():
        raise CondaError("CondaValueError", "You have chosen a non-default solver backend (%s) but it was not "
                         "recognized. Choose one of: %s" % (chosen, ", ".join(solvers())))

    # Parsed leniently, as conda does: rattler's strict parser refuses conda's "blas=*=mkl" form.
    parsed = [MatchSpec(spec) if isinstance(spec, str) else spec for spec in specs]
    try:
        return asyncio.run(rattler.solve_with_sparse_repodata(
            parsed, channels.sources, locked_packages=list(locked), virtual_packages=virtual_packages()))
    except Exception as exc:  # rattler raises SolverError; conda words it by cause
        if type(exc).__name__ not in ("SolverError",):
            raise
        if solver == "rattler":  # conda-rattler-solver passes rattler's own message through
            error = CondaError("RattlerUnsatisfiableError", str(exc).strip() + "\n", allow_retry=False)
            error.exception_type = "<class 'conda_rattler_solver.exceptions.RattlerUnsatisfiableError'>"
            raise error
        raise explain_failure(channels, specs)


# ---------------------------------------------------------------------------------------------
# transactions

def _identity(record):
    return (record.name.normalized, str(record.version), str(record.build), str(record.channel).rstrip("/"))


def diff(installed, target, force=()):
    """What to unlink and link; ``force`` (records of ``target``) are unlinked, when installed, and linked
    again, as conda's --force-reinstall does with the packages its specs match (core/solve.py,
    diff_for_unlink_link_precs)."""
    key = _identity
    forced = {key(r) for r in force}
    before = {key(r): r for r in installed}
    after = {key(r): r for r in target}
    unlink = [r for k, r in before.items() if k not in after or k in forced]
    link = [r for r in topological(list(target)) if key(r) not in before or key(r) in forced]
    return link, unlink


def package_cached(ctx, record):
    """In any cache, writable or not: conda reads them all and fetches only what none has."""
    return any(os.path.isdir(os.path.join(pkgs_dir, dist_name(record))) for pkgs_dir in ctx.config.pkgs_dirs)


def actions_json(ctx, prefix, link, unlink, dry_run=False, pip=None):
    actions = {"FETCH": [fetch_entry(r) for r in link if not package_cached(ctx, r)], "PREFIX": prefix}
    if unlink:
        actions["UNLINK"] = [entry(r, ctx.config) for r in unlink]
    if link:
        actions["LINK"] = [entry(r, ctx.config) for r in link]
    if pip:
        actions["PIP"] = pip
    data = {"success": True, "actions": actions, "prefix": prefix}
    if dry_run:
        data["dry_run"] = True
    return data


def print_plan(out, ctx, prefix, specs, link, unlink):
    out.text("\n## Package Plan ##\n\n  environment location: %s\n" % prefix)
    if specs:
        out.text("  added / updated specs:")
        for spec in sorted(specs):
            out.text("    - %s" % spec)
        out.text("\n")
    fetch = [r for r in link if not package_cached(ctx, r)]
    if fetch:
        out.text("The following packages will be downloaded:\n")
        out.text("    package                    |            build")
        out.text("    ---------------------------|-----------------")
        for r in sorted(fetch, key=lambda r: r.name.normalized):
            name = "%s-%s" % (r.name.normalized, r.version)
            out.text("    %-27s|%18s  %10s  %s" % (name, r.build, human_size(r.size or 0),
                                                   ctx.config.canonical_name(str(r.channel))))
        out.text("    ------------------------------------------------------------")
        out.text("%s%s\n" % (" " * 39, "Total: %10s" % human_size(sum(r.size or 0 for r in fetch))))
    names_unlinked = {r.name.normalized: r for r in unlink}
    new = [r for r in link if r.name.normalized not in names_unlinked]
    changed = [r for r in link if r.name.normalized in names_unlinked]
    removed = [r for r in unlink if r.name.normalized not in {x.name.normalized for x in link}]
    for title, group in (("The following NEW packages will be INSTALLED:", new),
                         ("The following packages will be REMOVED:", removed),
                         ("The following packages will be UPDATED/DOWNGRADED:", changed)):
        if group:
            out.text(title + "\n")
            for r in sorted(group, key=lambda r: r.name.normalized):
                channel = ctx.config.canonical_name(str(r.channel))
                out.text("  %-18s %s/%s::%s " % (r.name.normalized, channel, r.subdir, dist_name(r)))
            out.text("\n")


def human_size(size):
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return ("%d %s" % (size, unit)) if unit in ("B", "KB") else ("%.1f %s" % (size, unit))
        size /= 1024.0
    return str(size)


def execute(ctx, prefix, target, installed, argv, update_specs=(), remove_specs=(), force=()):
    """Conda's order: unlinks (reverse dependency order), each renaming the package's files and then
    its record to ``*.c~``; links; the backups deleted; ``conda-meta/history`` written last."""
    link, unlink = diff(installed, target, force)
    if not link and not unlink:
        if update_specs or remove_specs:
            write_history(prefix, argv, [], [], update_specs, remove_specs)
        return link, unlink
    cache = ctx.writable_dir("pkgs")
    unlinking = topological(unlink)[::-1]
    backups = pause_midway(cache, prefix, unlinking, link) if pause_requested() else []
    for record in unlinking:
        if os.path.exists(record_path(prefix, record)):
            backups += unlink_with_backups(prefix, record)
    link_packages(cache, prefix, list(target))
    for path in backups:
        os.unlink(path)
    write_history(prefix, argv, ["%s/%s::%s" % (ctx.config.canonical_name(str(r.channel)), r.subdir, dist_name(r)) for r in link],
                  ["%s/%s::%s" % (ctx.config.canonical_name(str(r.channel)), r.subdir, dist_name(r)) for r in unlink],
                  update_specs, remove_specs)
    ctx.register(prefix)
    return link, unlink


def link_packages(cache, prefix, records):
    """rattler makes the prefix hold ``records``. It writes an empty conda-meta/history into a new
    prefix at once; conda writes it last (write_history), so a killed create leaves none."""
    import asyncio
    import rattler

    history = os.path.join(prefix, "conda-meta", "history")
    had_history = os.path.exists(history)
    cached = set(os.listdir(cache)) if os.path.isdir(cache) else set()
    asyncio.run(rattler.install(records, prefix, cache_dir=cache, installed_packages=installed_records(prefix),
                                show_progress=False))
    if not had_history and os.path.exists(history):
        os.unlink(history)
    record_urls_as_conda_does(cache, prefix, [r for r in records if dist_name(r) not in cached], records)
    compile_noarch_python(prefix)


def record_urls_as_conda_does(cache, prefix, fetched, records):
    """Where conda 26.7 writes a package's URL, with or without the user:password of a mirror URL. The
    URL conda downloads with carries them (core/subdir_data.py: ``info["url"] = join_url(
    base_url_w_credentials, fn)``), and so do the package cache's ``urls.txt`` (core/path_actions.py,
    CacheUrlAction.execute: ``_urls_data.add_url(self.url)``) and ``<pkg>/info/repodata_record.json``
    (ExtractPackageAction.execute: ``PackageRecord.from_objects(self.record_or_spec, ...)``); conda-meta
    leaves them out since conda 24.11 (core/prefix_data.py, PrefixData.insert: ``url_remove_auth(
    mask_anaconda_token(prefix_record.url))``, conda PR 13937). rattler writes no urls.txt or
    repodata_record.json and keeps the credentials in conda-meta, so both are set right here: the cache's
    files for the ``fetched`` records (conda writes them when it downloads and extracts), conda-meta for
    all of ``records``."""
    urls_txt = os.path.join(cache, "urls.txt")
    known = open(urls_txt).read().split() if os.path.exists(urls_txt) else []
    for record in records:
        url = str(record.url)
        meta_path = record_path(prefix, record)
        if not os.path.exists(meta_path):
            continue
        with open(meta_path) as handle:
            meta = json.load(handle)
        if record in fetched and url not in known:
            with open(urls_txt, "a") as handle:
                handle.write(url + "\n")
            known.append(url)
        extracted = os.path.join(cache, dist_name(record), "info")
        if record in fetched and os.path.isdir(extracted):
            repodata_record = {k: v for k, v in meta.items() if k in REPODATA_RECORD_KEYS}
            with open(os.path.join(extracted, "repodata_record.json"), "w") as handle:
                json.dump(dict(repodata_record, url=url), handle, indent=2, sort_keys=True)
        # conda's channel field is str(Channel), never with credentials (models/channel.py, Channel.__str__);
        # rattler writes "user:********@".
        clean = dict(meta, url=_without_credentials(url), channel=_without_credentials(meta.get("channel") or ""))
        if clean != meta:
            meta = clean
            with open(meta_path + ".tmp", "w") as handle:
                json.dump(meta, handle, indent=2, sort_keys=True)
            os.replace(meta_path + ".tmp", meta_path)


# The fields of conda's PackageRecord (models/records.py) that a repodata_record.json holds.
REPODATA_RECORD_KEYS = ("arch", "build", "build_number", "channel", "constrains", "depends", "features", "fn",
                        "license", "license_family", "md5", "name", "noarch", "platform", "sha256", "size", "subdir",
                        "timestamp", "track_features", "url", "version")


def compile_noarch_python(prefix):
    """What conda's CompileMultiPycAction does after linking a ``noarch: python`` package: every ``.py``
    file under site-packages is compiled by the env's python (``-Wi -m compileall -q -l -i``) and the
    ``.pyc`` paths (common/path/python.py, pyc_path) join the record's ``files`` and ``paths_data`` as
    ``pyc_file``. rattler records none, so records without them get them here."""
    meta = os.path.join(prefix, "conda-meta")
    python = os.path.join(prefix, "bin", "python")
    for name in sorted(os.listdir(meta)) if os.path.isdir(meta) else []:
        path = os.path.join(meta, name)
        if not name.endswith(".json"):
            continue
        with open(path) as handle:
            record = json.load(handle)
        paths = (record.get("paths_data") or {}).get("paths") or []
        if record.get("noarch") != "python" or any(p.get("path_type") == "pyc_file" for p in paths):
            continue
        py_files = [f for f in record.get("files") or [] if re.match(r"^lib/python\d+\.\d+/site-packages/.+\.py$", f)]
        if not py_files or not os.access(python, os.X_OK):
            continue
        version = re.match(r"^lib/python(\d+)\.(\d+)/", py_files[0]).groups()
        pyc = ["%s/__pycache__/%s.cpython-%s%s.pyc" % (os.path.dirname(f), os.path.splitext(os.path.basename(f))[0],
                                                       version[0], version[1]) for f in py_files]
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as listing:
            listing.write("".join(os.path.join(prefix, f) + "\n" for f in py_files))
        try:
            subprocess.run([python, "-Wi", "-m", "compileall", "-q", "-l", "-i", listing.name], cwd=prefix,
                           capture_output=True, check=False)
        finally:
            os.unlink(listing.name)
        made = [f for f in pyc if os.path.exists(os.path.join(prefix, f))]
        record["files"] = sorted(set(record.get("files") or []) | set(made))
        record.setdefault("paths_data", {"paths_version": 1, "paths": []})["paths"] = \
            paths + [{"_path": f, "path_type": "pyc_file"} for f in made]
        with open(path + ".tmp", "w") as handle:
            json.dump(record, handle, indent=2, sort_keys=True)
        os.replace(path + ".tmp", path)


def record_path(prefix, record):
    return os.path.join(prefix, "conda-meta", dist_name(record) + ".json")


def unlink_with_backups(prefix, record, files=None):
    """Conda's unlink of one package: each file (``files``, default all) renamed to ``<path>.c~``, then,
    when all are, the record; returns the backups, which conda deletes only once the transaction is done."""
    backups = []
    every = [str(path) for path in record.files]
    for path in every if files is None else files:
        full = os.path.join(prefix, path)
        if os.path.lexists(full):
            os.replace(full, full + BACKUP_SUFFIX)
            backups.append(full + BACKUP_SUFFIX)
    if files is None:
        os.replace(record_path(prefix, record), record_path(prefix, record) + BACKUP_SUFFIX)
        backups.append(record_path(prefix, record) + BACKUP_SUFFIX)
    return backups


def pause_requested():
    """The test hook's mode: None, ``midway`` (empty pause file) or ``unlink-files``."""
    pause_file = os.environ.get(PAUSE_FILE_VARIABLE)
    if not pause_file or not os.path.exists(pause_file):
        return None
    with open(pause_file) as handle:
        return handle.read().strip() or "midway"


def pause_midway(cache, prefix, unlinking, link):
    """Test hook (``CONDA_TESTBED_PAUSE_FILE``, only while that file exists). An empty file: do the
    first half of the transaction's actions in conda's order (unlinks, then links), so that conda-meta
    is partly rewritten and dependencies may be broken. ``unlink-files`` in it: rename the first half
    (at least one) of the first unlinked package's files to ``*.c~`` and leave its record. Then write
    ``<file>.reached`` (JSON: this process's pid, what was done) and wait while the file exists. A test
    kills the process here with SIGKILL, as an interrupted real conda would be; removing the file
    lets it finish instead. Returns the ``*.c~`` backups made."""
    pause_file = os.environ[PAUSE_FILE_VARIABLE]
    actions = [("unlink", r) for r in unlinking] + [("link", r) for r in link]
    report = {"pid": os.getpid(), "prefix": prefix}
    backups = []
    if pause_requested() == "unlink-files" and unlinking:
        files = [str(path) for path in unlinking[0].files]
        backups = unlink_with_backups(prefix, unlinking[0], files[:max(1, len(files) // 2)])
        report.update(done=[], partly=["unlink %s" % dist_name(unlinking[0])],
                      backups=[os.path.relpath(b, prefix) for b in backups],
                      left=["%s %s" % (kind, dist_name(r)) for kind, r in actions])
    else:
        done = actions[:(len(actions) + 1) // 2]
        for kind, record in done:
            if kind == "unlink":
                backups += unlink_with_backups(prefix, record)
        linked = [r for kind, r in done if kind == "link"]
        if linked:
            link_packages(cache, prefix, installed_records(prefix) + linked)
        report.update(done=["%s %s" % (kind, dist_name(r)) for kind, r in done],
                      left=["%s %s" % (kind, dist_name(r)) for kind, r in actions[len(done):]])
    with open(pause_file + ".reached.tmp", "w") as handle:
        json.dump(report, handle)
    os.replace(pause_file + ".reached.tmp", pause_file + ".reached")
    while os.path.exists(pause_file):
        time.sleep(0.1)
    return backups


def to_repodata_records(records):
    """PrefixRecords as the solver's locked packages."""
    return list(records)


# ---------------------------------------------------------------------------------------------
# environment files and pip

def read_env_file(path):
    if not os.path.exists(path):
        raise CondaError("EnvironmentFileNotFound", "'%s' file not found" % path, filename=path)
    try:
        with open(path) as handle:
            data = yaml.safe_load(handle)
    except yaml.YAMLError as exc:
        raise CondaError("EnvironmentFileInvalid", "Invalid environment file '%s': %s" % (path, exc), filename=path)
    if not isinstance(data, dict) or not isinstance(data.get("dependencies", []), list):
        raise CondaError("EnvironmentFileInvalid", "Invalid environment file '%s': expected a mapping with a "
                         "'dependencies' list" % path, filename=path)
    conda_specs, pip_specs = [], []
    for dep in data.get("dependencies") or []:
        if isinstance(dep, dict) and "pip" in dep:
            pip_specs.extend(str(p) for p in dep["pip"] or [])
        elif isinstance(dep, str):
            conda_specs.append(dep)
        else:
            raise CondaError("EnvironmentFileInvalid", "Invalid environment file '%s': unexpected dependency %r"
                             % (path, dep), filename=path)
    return {"name": data.get("name"), "prefix": data.get("prefix"), "channels": [str(c) for c in data.get("channels") or []],
            "conda": conda_specs, "pip": pip_specs, "path": os.path.abspath(path),
            "variables": {str(k): str(v) for k, v in (data.get("variables") or {}).items()}}


def run_pip(out, prefix, env_file):
    """Run the pip section exactly as conda 26.7 does; return pip's output."""
    folder = os.path.dirname(env_file["path"])
    handle, requirements = tempfile.mkstemp(prefix="condaenv.", suffix=".requirements.txt", dir=folder)
    try:
        with os.fdopen(handle, "w") as stream:
            stream.write("\n".join(env_file["pip"]) + "\n")
        command = [os.path.join(prefix, "bin", "python"), "-m", "pip", "install", "-U", "-r", requirements,
                   "--exists-action=b"]
        out.text("Installing pip dependencies: ...working... Ran pip subprocess with arguments:")
        out.text(repr(command))
        proc = subprocess.run(command, capture_output=True, text=True, cwd=folder, check=False)
        out.text("Pip subprocess output:")
        out.text(proc.stdout)
        if proc.returncode != 0:
            sys.stderr.write("Pip subprocess error:\n%s\n" % proc.stderr)
            raise CondaError("CondaEnvException", "Pip failed")  # pip's reason is on stderr only, as in conda
        out.text("done")
    finally:
        os.unlink(requirements)


# ---------------------------------------------------------------------------------------------
# commands

# conda info lists these whether set or not, then the caller's CONDA*, PYTHON*, SUDO* and *PATH
# variables; *PROXY ones are listed without their value (it may hold credentials).
INFO_ENV_VARS = ("CIO_TEST", "CURL_CA_BUNDLE", "LD_PRELOAD", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE")


def info_env_vars(environ):
    names = set(INFO_ENV_VARS)
    names.update(n for n in environ if n.upper().startswith(("CONDA", "PYTHON", "SUDO")) or n.upper().endswith("PATH"))
    shown = {n: environ.get(n, environ.get(n.lower(), "<not set>")) for n in sorted(names)}
    shown.update({n: "<set>" for n in environ if n.upper().endswith("PROXY")})
    return shown


def cmd_info(ctx, args, out):
    if args.envs:
        return cmd_env_list(ctx, args, out)
    config = ctx.config
    channels = ["%s/%s" % (u, s) for u in config.expand_channels(config.channels) for s in SUBDIRS]
    envs = ctx.registered()
    data = {"platform": "linux-64", "conda_version": CONDA_VERSION, "conda_env_version": CONDA_VERSION,
            "conda_build_version": "not installed", "root_prefix": ctx.root, "conda_prefix": ctx.root,
            "av_data_dir": os.path.join(ctx.root, "etc", "conda"), "av_metadata_url_base": None,
            "root_writable": config.root_writable, "pkgs_dirs": config.pkgs_dirs, "envs_dirs": config.envs_dirs,
            "default_prefix": os.environ.get("CONDA_PREFIX") or ctx.root, "active_prefix": os.environ.get("CONDA_PREFIX"),
            "active_prefix_name": None, "conda_shlvl": int(os.environ.get("CONDA_SHLVL", -1)), "channels": channels,
            "user_rc_path": os.path.expanduser("~/.condarc"), "rc_path": os.path.expanduser("~/.condarc"),
            "sys_rc_path": os.path.join(ctx.root, ".condarc"), "offline": config.offline, "envs": envs,
            "python_version": "%d.%d.%d.%s.%d" % tuple(sys.version_info), "requests_version": "not installed",
            "user_agent": "conda/%s conda-standin rattler" % CONDA_VERSION, "conda_location": os.path.dirname(os.path.abspath(__file__)),
            "config_files": [p for p, _d in config.sources], "netrc_file": None,
            "virtual_pkgs": [[str(v.into_generic().name.normalized), str(v.into_generic().version), str(v.into_generic().build_string)]
                             for v in virtual_packages()],
            "solver": {"name": config.get("solver", "libmamba"), "user_agent": "solver/rattler", "default": "solver" not in config.values},
            "tmp_dir": tempfile.gettempdir(), "notices_cache_dir": os.path.expanduser("~/.cache/conda/notices"),
            "UID": os.getuid(), "GID": os.getgid(), "sys.version": sys.version, "sys.prefix": sys.prefix,
            "sys.executable": sys.executable, "site_dirs": [],
            "env_vars": info_env_vars(os.environ),
            "envs_details": {p: ctx.env_details(p) for p in envs}}
    if out.json:
        out.emit_json(data)
    else:
        out.text("\n     active environment : %s" % (os.environ.get("CONDA_DEFAULT_ENV") or "None"))
        for label, key in (("conda version", "conda_version"), ("platform", "platform"), ("base environment", "root_prefix")):
            out.text("%24s : %s" % (label, data[key]))
        out.text("%24s : %s" % ("channel URLs", "\n                          ".join(channels)))
        out.text("%24s : %s" % ("package cache", "\n                          ".join(config.pkgs_dirs)))
        out.text("%24s : %s" % ("envs directories", "\n                          ".join(config.envs_dirs)))
        out.text("%24s : %s\n" % ("offline mode", data["offline"]))
    return 0


def cmd_env_list(ctx, args, out):
    envs = ctx.registered()
    if out.json:
        out.emit_json({"envs": envs, "envs_details": {p: ctx.env_details(p) for p in envs}})
    else:
        out.text("\n# conda environments:\n#\n# * -> active\n# + -> frozen")
        for prefix in envs:
            name = "base" if prefix == ctx.root else (os.path.basename(prefix) if os.path.dirname(prefix) in ctx.config.envs_dirs else "")
            out.text("%-24s %s" % (name, prefix))
        out.text("")
    return 0


def channel_names(ctx, args, extra=()):
    names = list(args.channel or []) + list(extra)
    if not args.override_channels:
        names += ctx.config.channels
    elif not names:
        raise CondaError("ArgumentError", "At least one -c / --channel flag must be supplied when using --override-channels.")
    return names


def explicit_entries(paths):
    """The packages of ``@EXPLICIT`` files, ``[(url, md5 or None)]``, or None when no file is one (conda/misc.py,
    explicit: such a file is installed as listed, nothing solved and no repodata fetched)."""
    entries, explicit = [], False
    for path in paths or []:
        with open(path) as handle:
            lines = [line.strip() for line in handle if line.strip() and not line.startswith("#")]
        if "@EXPLICIT" not in lines:
            continue
        explicit = True
        for line in lines[lines.index("@EXPLICIT") + 1:]:
            url, _hash, checksum = line.partition("#")
            entries.append((url, checksum or None))
    return entries if explicit else None


def create_explicit(ctx, args, out, argv, prefix, entries):
    """conda create --file <@EXPLICIT file>: each URL downloaded and checked against its md5, then linked."""
    import asyncio
    import urllib.request
    import rattler

    cache = ctx.writable_dir("pkgs")
    os.makedirs(cache, exist_ok=True)
    records = []
    out.text("\nDownloading and Extracting Packages: ...working... done")
    for url, checksum in entries:
        file_name = url.rsplit("/", 1)[-1]
        with urllib.request.urlopen(_request(url), timeout=60) as response:  # nosec: test bed
            data = response.read()
        if checksum and hashlib.md5(data, usedforsecurity=False).hexdigest() != checksum:
            raise CondaError("ChecksumMismatchError", "Conda detected a mismatch between the expected content and "
                             "downloaded content for url '%s'." % url, url=url)
        path = os.path.join(cache, file_name)
        with open(path, "wb") as handle:
            handle.write(data)
        local = asyncio.run(rattler.RepoDataRecord.from_package_archive(path))
        records.append(rattler.RepoDataRecord(local, file_name, _without_credentials(url),
                                              _without_credentials(url).rsplit("/", 2)[0] + "/"))
    if args.dry_run:
        return 0
    if is_env(prefix):
        remove_prefix(ctx, prefix)
    out.step("Preparing transaction")
    out.step("Verifying transaction")
    execute(ctx, prefix, records, [], argv)
    out.step("Executing transaction")
    return 0


def cmd_create_install(ctx, args, out, argv, creating):
    prefix = ctx.prefix_for(args.name, args.prefix, must_exist=not creating)
    specs = list(args.packages)
    explicit = explicit_entries(args.file) if creating else None
    if explicit is not None:
        return create_explicit(ctx, args, out, argv, prefix, explicit)
    if args.file:
        for path in args.file:
            with open(path) as handle:
                specs += [line.strip() for line in handle if line.strip() and not line.startswith(("#", "@"))]
    out.step("Collecting package metadata (repodata.json)")
    channels = Channels(ctx, channel_names(ctx, args), out, offline=args.offline).load()
    try:
        recreate = creating and is_env(prefix)
        installed = [] if creating else installed_records(prefix)
        history = {} if creating else history_specs(prefix)
        from rattler import MatchSpec

        requested = {MatchSpec(s).name.normalized: s for s in specs}
        all_specs = [s for n, s in history.items() if n not in requested] + specs
        target = solve(channels, all_specs, locked=installed, solver=args.solver)
        out.step("Solving environment")
        force = forced_records(target, specs) if getattr(args, "force_reinstall", False) else []
        link, unlink = diff(installed_records(prefix) if recreate else installed, target, force)
        if recreate:
            link = topological(list(target))
            unlink = []
        if not link and not unlink:
            if out.json:
                out.emit_json({"success": True, "message": NOTHING_TO_DO})
            else:
                out.text("\n# %s\n" % NOTHING_TO_DO)
            return 0
        if args.dry_run:
            if out.json:
                out.emit_json(actions_json(ctx, prefix, link, unlink, dry_run=True))
            else:
                print_plan(out, ctx, prefix, specs, link, unlink)
                out.text("\nDryRunExit: Dry run. Exiting.\n")
            return 0
        if not out.json:
            print_plan(out, ctx, prefix, specs, link, unlink)
        if recreate:
            remove_prefix(ctx, prefix)
        data = actions_json(ctx, prefix, link, unlink)
        out.text("\nDownloading and Extracting Packages: ...working... done")
        out.step("Preparing transaction")
        out.step("Verifying transaction")
        execute(ctx, prefix, target, [] if recreate else installed, argv, update_specs=specs, force=force)
        out.step("Executing transaction")
        if out.json:
            out.emit_json(data)
        elif creating:
            out.text(ACTIVATION_HINT % (args.name or prefix))
        return 0
    finally:
        channels.close()


def forced_records(target, specs):
    """The records of ``target`` that the requested specs match (conda: the first match of each spec)."""
    from rattler import MatchSpec

    found = []
    for spec in specs:
        parsed = MatchSpec(spec)
        match = next((r for r in target if parsed.matches(r)), None)
        if match is None:
            raise CondaError("CondaError", "Could not find record for spec %s" % spec)
        found.append(match)
    return found


def remove_prefix(ctx, prefix):
    shutil.rmtree(prefix)
    ctx.unregister(prefix)


def cmd_remove(ctx, args, out, argv):
    prefix = ctx.prefix_for(args.name, args.prefix, must_exist=True)
    installed = installed_records(prefix)
    if args.all:
        data = actions_json(ctx, prefix, [], topological(installed)[::-1])
        if args.dry_run:
            data["dry_run"] = True
        elif prefix == ctx.root:
            raise CondaError("CondaEnvironmentError", "cannot remove root environment, add -n NAME or -p PREFIX option")
        else:
            remove_prefix(ctx, prefix)
        if out.json:
            out.emit_json(data)
        else:
            out.text("\nRemove all packages in environment %s:\n" % prefix)
            out.text("Everything found within the environment (%s), including any conda environment configurations "
                     "and any non-conda files, will be deleted." % prefix)
        return 0
    from rattler import MatchSpec

    names = [MatchSpec(p).name.normalized for p in args.packages]
    missing = [p for p, n in zip(args.packages, names) if n not in {r.name.normalized for r in installed}]
    if missing:
        raise CondaError("PackagesNotFoundError", "The following packages are missing from the target environment:\n%s\n"
                         % "".join("  - %s\n" % m for m in missing), packages=missing)
    keep = {n: s for n, s in history_specs(prefix).items() if n not in names}
    out.step("Collecting package metadata (repodata.json)")
    channels = Channels(ctx, channel_names(ctx, args), out, offline=args.offline).load()
    try:
        target = solve(channels, list(keep.values()), locked=[r for r in installed if r.name.normalized not in names]) if keep else []
        out.step("Solving environment")
        link, unlink = diff(installed, target)
        if args.dry_run:
            out.emit_json(actions_json(ctx, prefix, link, unlink, dry_run=True)) if out.json else print_plan(out, ctx, prefix, [], link, unlink)
            return 0
        data = actions_json(ctx, prefix, link, unlink)
        if not out.json:
            print_plan(out, ctx, prefix, [], link, unlink)
        execute(ctx, prefix, target, installed, argv, remove_specs=args.packages)
        out.step("Executing transaction")
        if out.json:
            out.emit_json(data)
        return 0
    finally:
        channels.close()


def env_prefix(ctx, args, env_file):
    if args.prefix:
        return os.path.abspath(args.prefix)
    if args.name:
        return ctx.prefix_for(args.name)
    if env_file["name"]:
        return ctx.prefix_for(env_file["name"])
    if env_file["prefix"]:
        return env_file["prefix"]
    raise CondaError("SpecNotFound", "Environment with requirements.txt file needs a name")


def cmd_env_create_update(ctx, args, out, argv, creating):
    env_file = read_env_file(args.file)
    prefix = env_prefix(ctx, args, env_file)
    exists = is_env(prefix)
    if not creating and os.path.isdir(prefix) and not exists:
        raise not_an_env(prefix)
    out.step("Collecting package metadata (repodata.json)")
    channels = Channels(ctx, env_file["channels"] + ctx.config.channels, out).load()
    try:
        recreate = creating and exists
        installed = installed_records(prefix) if exists and not creating else []
        # core/solve.py: with --prune "DO NOT add existing prefix data to solution", installed specs and history
        # ignored: a fresh solve, so unpinned packages move to the newest that fits; without it
        # (FREEZE_INSTALLED) what is installed is kept where it can be.
        locked = [] if args.prune else installed
        specs = list(env_file["conda"])
        if not creating and not args.prune:
            from rattler import MatchSpec

            names = {MatchSpec(s).name.normalized for s in specs}
            specs = [s for n, s in history_specs(prefix).items() if n not in names] + specs
        target = solve(channels, specs, locked=locked)
        out.step("Solving environment")
        link, unlink = diff(installed, target)
        if args.dry_run:
            if out.json:
                out.emit_json(actions_json(ctx, prefix, link, unlink, dry_run=True) if (link or unlink)
                              else {"success": True, "message": NOTHING_TO_DO})
            else:
                print_plan(out, ctx, prefix, env_file["conda"], link, unlink)
                out.text("\nDryRunExit: Dry run. Exiting.\n")
            return 0
        if creating:
            print_plan(out, ctx, prefix, env_file["conda"], link, unlink)
        if recreate:  # conda 26.7 deletes the existing environment without asking (recorded)
            remove_prefix(ctx, prefix)
        if link or unlink:
            out.text("\nDownloading and Extracting Packages: ...working... done")
            out.step("Preparing transaction")
            out.step("Verifying transaction")
        pip_before = set(pypi_packages(prefix)) if exists and not recreate else set()
        execute(ctx, prefix, target, installed, argv, update_specs=env_file["conda"],
                remove_specs=[n for n in history_specs(prefix) if args.prune and n not in
                              {s.split("=")[0].split(" ")[0].split("<")[0].split(">")[0] for s in env_file["conda"]}]
                if exists else ())
        if not is_env(prefix):  # an empty spec list still makes an environment
            write_history(prefix, argv, [], [])
            ctx.register(prefix)
        if link or unlink:
            out.step("Executing transaction")
        if env_file["pip"]:
            run_pip(out, prefix, env_file)
        if env_file["variables"]:
            set_env_vars(prefix, env_file["variables"])
        if out.json:
            if not link and not unlink:
                out.emit_json({"success": True, "message": NOTHING_TO_DO})
            else:
                pip_new = ["%s-%s" % p for p in pypi_packages(prefix) if p not in pip_before]
                out.emit_json(actions_json(ctx, prefix, link, unlink, pip=pip_new if creating else None))
        else:
            out.text(ACTIVATION_HINT % (args.name or env_file["name"] or prefix))
        return 0
    finally:
        channels.close()


# conda's PrefixData keeps an env's variables in conda-meta/state; an unset one keeps this value so
# that activation unsets it (base/constants.py CONDA_ENV_VARS_UNSET_VAR, core/prefix_data.py).
UNSET_VAR = "***unset***"


def env_state(prefix):
    path = os.path.join(prefix, "conda-meta", "state")
    if not os.path.lexists(path):
        return {}
    with open(path) as handle:
        return json.load(handle)


def write_env_state(prefix, state):
    with open(os.path.join(prefix, "conda-meta", "state"), "w") as handle:
        handle.write(json.dumps(state, ensure_ascii=False))


def set_env_vars(prefix, variables):
    """PrefixData.set_environment_env_vars: merged into what is there."""
    state = env_state(prefix)
    if state.get("env_vars"):
        state["env_vars"].update(variables)
    else:
        state["env_vars"] = dict(variables)
    write_env_state(prefix, state)


def cmd_env_vars(ctx, args, out):
    """``conda env config vars list|set|unset`` (cli/main_env_vars.py)."""
    prefix = ctx.prefix_for(args.name, args.prefix)
    if not os.path.lexists(prefix):
        raise CondaError("EnvironmentLocationNotFound", "Not a conda environment: %s" % prefix, location=prefix)
    if args.vars_command == "list":
        shown = {k: v for k, v in (env_state(prefix).get("env_vars") or {}).items() if v != UNSET_VAR}
        if out.json:
            out.emit_json(shown)
        else:
            for key, value in shown.items():
                out.text("%s = %s" % (key, value))
    elif args.vars_command == "set":
        set_env_vars(prefix, {var.split("=")[0].strip(): "=".join(var.split("=")[1:]).strip() for var in args.vars})
    else:
        state = env_state(prefix)
        current = state.get("env_vars")
        if current:
            for var in (v.strip() for v in args.vars):
                if var in current:
                    current[var] = UNSET_VAR
            write_env_state(prefix, state)
    return 0


def cmd_list(ctx, args, out):
    prefix = ctx.prefix_for(args.name, args.prefix, must_exist=True)
    records = installed_records(prefix)
    if args.explicit:
        out.text("# This file may be used to create an environment using:\n# $ conda create --name <env> --file <this file>")
        out.text("# platform: linux-64\n# created-by: conda %s\n@EXPLICIT" % CONDA_VERSION)
        for r in topological(records):
            # conda 24.7 and later leave a URL's user:password out unless --auth (conda PR 13936); conda-meta
            # has none since 24.11 (PR 13937) and an older record may.
            url = r.url if args.auth else _without_credentials(r.url)
            out.text(url + ("#%s" % r.md5.hex() if args.md5 and r.md5 else ""))
        return 0
    rows = [entry(r, ctx.config) for r in records]
    alias = ctx.config.channel_alias
    rows += [{"base_url": alias + "/pypi", "build_number": 0, "build_string": "pypi_0", "channel": "pypi",
              "dist_name": "%s-%s-pypi_0" % (n, v), "name": n, "platform": "pypi", "version": v}
             for n, v in pypi_packages(prefix, records)]
    rows.sort(key=lambda r: r["name"])
    if out.json:
        out.emit_json(rows)
    else:
        out.text("# packages in environment at %s:\n#\n# Name                     Version          Build            Channel" % prefix)
        for row in rows:
            out.text("%-26s %-16s %-16s %s" % (row["name"], row["version"], row["build_string"], row["channel"]))
    return 0


def cmd_env_export(ctx, args, out):
    prefix = ctx.prefix_for(args.name, args.prefix, must_exist=True)
    records = sorted(installed_records(prefix), key=lambda r: r.name.normalized)
    channels = []
    for r in records:
        name = ctx.config.canonical_name(str(r.channel))
        if name not in channels:
            channels.append(name)
    pip = ["%s==%s" % p for p in pypi_packages(prefix, records)]
    if args.from_history:
        deps = list(history_specs(prefix).values())
        if pip:
            sys.stderr.write("%s: CondaExportWarning: The exported environment contains 3rd party Python packages.\n\n"
                             "Your environment contains %d package installed via pip. Conda cannot reliably lock these "
                             "packages for reproducible environments.\n\nDetected packages:\n%s\n"
                             % (__file__, len(pip), "".join("  - %s\n" % p for p in pip)))
    else:
        deps = ["%s=%s=%s" % (r.name.normalized, r.version, r.build) for r in records]
        if pip:
            deps.append({"pip": pip})
    data = {"name": os.path.basename(prefix) if prefix != ctx.root else "base", "channels": channels,
            "dependencies": deps, "prefix": prefix}
    if out.json:
        out.emit_json(data)
        return 0
    lines = ["name: %s" % data["name"], "channels:"] + ["  - %s" % c for c in channels] + ["dependencies:"]
    for dep in deps:
        if isinstance(dep, dict):
            lines += ["  - pip:"] + ["      - %s" % p for p in dep["pip"]]
        else:
            lines.append("  - %s" % dep)
    sys.stdout.write("\n".join(lines + ["prefix: %s" % prefix]) + "\n")
    return 0


def cmd_compare(ctx, args, out):
    from rattler import MatchSpec

    prefix = ctx.prefix_for(args.name, args.prefix, must_exist=True)
    env_file = read_env_file(args.file)
    installed = {r.name.normalized: r for r in installed_records(prefix)}
    pypi = dict(pypi_packages(prefix))
    problems = []
    for text in env_file["conda"] + env_file["pip"]:
        try:
            spec = MatchSpec(text)
        except Exception as exc:  # rattler's InvalidMatchSpecError; conda's name for it
            raise CondaError("InvalidMatchSpec", "Invalid spec '%s': %s" % (text, exc))
        name = spec.name.normalized
        if name in installed:
            version, build = str(installed[name].version), str(installed[name].build)
        elif name in pypi:
            version, build = pypi[name], "pypi_0"
        else:
            problems.append("%s not found" % name)
            continue
        if not _matches(spec, {"name": name, "version": version}) or (spec.build and not re.fullmatch(
                str(spec.build).replace("*", ".*"), build)):
            problems.append("%s found but mismatch. Specification pkg: %s, Running pkg: %s==%s=%s"
                            % (name, text, name, version, build))
    lines = problems or ["Success. All the packages in the specification file are present in the environment "
                         "with matching version and build string."]
    if out.json:
        out.emit_json(lines)
    else:
        for line in lines:
            out.text(line)
    return 1 if problems else 0


def cmd_config(ctx, args, out):
    if args.show_sources:
        if out.json:
            out.emit_json(dict(ctx.config.sources))
        else:
            for path, data in ctx.config.sources:
                out.text("==> %s <==" % path)
                out.text(yaml.safe_dump(data, sort_keys=False, default_flow_style=False, indent=2)
                         .replace("\n- ", "\n  - ").replace("true", "True").replace("false", "False"))
        return 0
    if args.show is not None:
        shown = ctx.config.show()
        if args.show:
            unknown = [k for k in args.show if k not in shown]
            if unknown:
                raise CondaError("ArgumentError", "Invalid configuration parameters: %s" % unknown)
            shown = {k: shown[k] for k in sorted(args.show)}
        if out.json:
            out.emit_json(shown)
        else:
            sys.stdout.write(yaml.safe_dump(shown, default_flow_style=False))
        return 0
    raise CondaError("ArgumentError", "this stand-in implements only --show and --show-sources")


def tos_accepted(ctx):
    path = os.path.join(ctx.root, ".conda-standin-tos-accepted.json")
    if not os.path.exists(path):
        return []
    with open(path) as handle:
        return json.load(handle)


def cmd_tos(ctx, args, out):
    if args.action != "accept":
        raise CondaError("ArgumentError", "this stand-in implements only `conda tos accept`")
    urls = ctx.config.expand_channels(channel_names(ctx, args))
    accepted = tos_accepted(ctx)
    for url in urls:
        if url not in accepted:
            accepted.append(url)
        out.text("accepted Terms of Service for %s" % url)
    os.makedirs(os.path.join(ctx.root, "conda-meta"), exist_ok=True)
    with open(os.path.join(ctx.root, ".conda-standin-tos-accepted.json"), "w") as handle:
        json.dump(accepted, handle)
    return 0


def cmd_clean(ctx, args, out):
    removed = {"tarballs": [], "packages": [], "index_cache": []}
    in_use = set()
    for prefix in ctx.registered():
        for r in installed_records(prefix):
            in_use.add(dist_name(r))
    for pkgs_dir in ctx.config.pkgs_dirs:
        cache = pkgs_dir
        if not os.path.isdir(cache):
            continue
        for name in sorted(os.listdir(cache)):
            path = os.path.join(cache, name)
            if (args.all or args.tarballs) and name.endswith((".conda", ".tar.bz2")):
                removed["tarballs"].append(path)
            elif (args.all or args.packages) and os.path.isdir(path) and name not in in_use:
                removed["packages"].append(path)
        index = os.path.join(pkgs_dir, "cache")
        if (args.all or args.index_cache) and os.path.isdir(index):
            removed["index_cache"].append(index)
    # conda's -f/--force-pkgs-dirs (not part of --all): every writable package cache goes whole.
    forced = [d for d in ctx.config.pkgs_dirs if args.force_pkgs_dirs and os.path.isdir(d) and os.access(d, os.W_OK)]
    if not args.dry_run:
        for pkgs_dir in forced:
            shutil.rmtree(pkgs_dir)
        for paths in removed.values():
            for path in (p for p in paths if os.path.lexists(p)):
                shutil.rmtree(path) if os.path.isdir(path) else os.unlink(path)
                if os.path.exists(path + ".lock"):
                    os.unlink(path + ".lock")
    if out.json:
        out.emit_json({k: {"files": v} for k, v in removed.items()})
    else:
        total = sum(len(v) for v in removed.values())
        out.text("Will remove %d package(s)." % total if total else "There are no unused tarball(s) to remove.")
        for path in removed["packages"] + removed["tarballs"]:
            out.text("  %s" % path)
    return 0


# ---------------------------------------------------------------------------------------------
# argument parsing

def parser():
    top = argparse.ArgumentParser(prog="conda")
    top.add_argument("--version", action="version", version="conda %s" % CONDA_VERSION)
    sub = top.add_subparsers(dest="command", required=True)

    def common(p, target=True, channels=False):
        p.add_argument("--json", action="store_true")
        p.add_argument("-q", "--quiet", action="store_true")
        p.add_argument("-v", "--verbose", action="count", default=0)
        p.add_argument("-y", "--yes", action="store_true")
        if target:
            group = p.add_mutually_exclusive_group()
            group.add_argument("-n", "--name")
            group.add_argument("-p", "--prefix")
        if channels:
            p.add_argument("-c", "--channel", action="append")
            p.add_argument("--override-channels", action="store_true")
            p.add_argument("--offline", action="store_true")
            p.add_argument("-d", "--dry-run", action="store_true")
            p.add_argument("--solver", choices=solvers())
        return p

    info = common(sub.add_parser("info"), target=False)
    info.add_argument("-e", "--envs", action="store_true")
    for name in ("create", "install", "update"):
        p = common(sub.add_parser(name), channels=True)
        p.add_argument("--file", action="append")
        p.add_argument("--force-reinstall", action="store_true")
        p.add_argument("packages", nargs="*")
    remove = common(sub.add_parser("remove", aliases=["uninstall"]), channels=True)
    remove.add_argument("--all", action="store_true")
    remove.add_argument("packages", nargs="*")
    listing = common(sub.add_parser("list"))
    listing.add_argument("--explicit", action="store_true")
    listing.add_argument("--md5", action="store_true")
    listing.add_argument("--auth", action="store_true")
    compare = common(sub.add_parser("compare"))
    compare.add_argument("file")
    config = common(sub.add_parser("config"), target=False)
    config.add_argument("--show", nargs="*")
    config.add_argument("--show-sources", action="store_true")
    clean = common(sub.add_parser("clean"), target=False)
    for flag in ("--all", "--packages", "--tarballs", "--index-cache"):
        clean.add_argument(flag if flag != "--all" else "-a", *(["--all"] if flag == "--all" else []), action="store_true")
    clean.add_argument("-d", "--dry-run", action="store_true")
    clean.add_argument("-f", "--force-pkgs-dirs", action="store_true")
    if "conda_anaconda_tos" in installed_plugins():  # conda itself has no tos subcommand
        tos = sub.add_parser("tos")
        tos.add_argument("action", choices=("accept", "view", "reject"))
        common(tos, target=False, channels=True)

    env = sub.add_parser("env").add_subparsers(dest="env_command", required=True)
    common(env.add_parser("list"), target=False).add_argument("--envs", action="store_true", help=argparse.SUPPRESS)
    for name in ("create", "update"):
        p = common(env.add_parser(name))
        p.add_argument("-f", "--file", default="environment.yml")
        p.add_argument("--prune", action="store_true")
        p.add_argument("-d", "--dry-run", action="store_true")
        p.add_argument("--offline", action="store_true")
        p.add_argument("--solver", choices=solvers())
    config_vars = env.add_parser("config").add_subparsers(dest="config_command", required=True) \
        .add_parser("vars").add_subparsers(dest="vars_command", required=True)
    for name in ("list", "set", "unset"):
        p = common(config_vars.add_parser(name))
        if name != "list":
            p.add_argument("vars", nargs="*")
    export = common(env.add_parser("export"))
    export.add_argument("--from-history", action="store_true")
    export.add_argument("--no-builds", action="store_true")
    export.add_argument("-f", "--file")
    return top


def main(argv=None, root_prefix=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    root = root_prefix or os.environ.get("CONDA_STANDIN_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(sys.argv[0])))
    args = parser().parse_args(argv)
    out = Out(getattr(args, "json", False), getattr(args, "quiet", False))
    full_argv = [os.path.join(root, "bin", "conda")] + argv
    try:
        ctx = Context(root)
        if args.command == "env":
            if args.env_command == "list":
                return cmd_env_list(ctx, args, out)
            if args.env_command in ("create", "update"):
                return cmd_env_create_update(ctx, args, out, full_argv, creating=args.env_command == "create")
            if args.env_command == "config":
                return cmd_env_vars(ctx, args, out)
            return cmd_env_export(ctx, args, out)
        handlers = {
            "info": lambda: cmd_info(ctx, args, out),
            "create": lambda: cmd_create_install(ctx, args, out, full_argv, creating=True),
            "install": lambda: cmd_create_install(ctx, args, out, full_argv, creating=False),
            "update": lambda: cmd_create_install(ctx, args, out, full_argv, creating=False),
            "remove": lambda: cmd_remove(ctx, args, out, full_argv),
            "uninstall": lambda: cmd_remove(ctx, args, out, full_argv),
            "list": lambda: cmd_list(ctx, args, out),
            "compare": lambda: cmd_compare(ctx, args, out),
            "config": lambda: cmd_config(ctx, args, out),
            "tos": lambda: cmd_tos(ctx, args, out),
            "clean": lambda: cmd_clean(ctx, args, out),
        }
        return handlers[args.command]()
    except CondaConfigError as exc:
        error = CondaError("ConfigurationLoadError", str(exc).split(": ", 1)[1])
    except CondaError as exc:
        error = exc
    if not out.json:
        sys.stdout.write("failed\n")
    if out.json:
        out.emit_json(error.as_json())
    else:
        sys.stderr.write("\n%s: %s\n" % (error.name, error.message))
    return 1


def run(root_prefix=None, version=None):
    """Entry point of the installed ``bin/conda``: exits without interpreter finalization, which
    crashes when rattler's runtime threads are still alive (py-rattler 0.28)."""
    global CONDA_VERSION  # pylint: disable=global-statement
    CONDA_VERSION = version or CONDA_VERSION
    code = main(root_prefix=root_prefix)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
