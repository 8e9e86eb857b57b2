"""The stand-in's view of conda's configuration: .condarc files, channels, directories.

Reads the same files as conda 26.7, in conda's order (later files take precedence):
``/etc/conda/.condarc``, ``/etc/conda/condarc``, ``/etc/conda/condarc.d/*.yml``,
``<root>/.condarc``, ``<root>/condarc``, ``<root>/condarc.d/*.yml``,
``~/.config/conda/.condarc``, ``~/.conda/.condarc``, ``~/.condarc``, then ``$CONDARC``.
Only the settings the product writes are interpreted; all others are shown with conda's defaults.
"""

import glob
import json
import os
import re
from urllib.parse import urlparse

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "config_defaults.json")) as _handle:
    DEFAULTS = json.load(_handle)

DEFAULT_CHANNEL_ALIAS = "https://conda.anaconda.org"
DEFAULT_CHANNELS = ["https://repo.anaconda.com/pkgs/main", "https://repo.anaconda.com/pkgs/r"]
# Anaconda's channels that need their terms of service accepted (conda-anaconda-tos, July 2025).
TOS_CHANNEL_PREFIX = "https://repo.anaconda.com/pkgs/"
SUBDIRS = ("linux-64", "noarch")
# Sequence settings: values from all files are merged, higher precedence first (as conda does).
MERGED_LISTS = ("channels", "envs_dirs", "pkgs_dirs", "default_channels")


def search_path(root):
    home = os.path.expanduser("~")
    paths = ["/etc/conda/.condarc", "/etc/conda/condarc"]
    paths += sorted(glob.glob("/etc/conda/condarc.d/*.yml")) + sorted(glob.glob("/etc/conda/condarc.d/*.yaml"))
    paths += [os.path.join(root, ".condarc"), os.path.join(root, "condarc")]
    paths += sorted(glob.glob(os.path.join(root, "condarc.d", "*.yml"))) + sorted(glob.glob(os.path.join(root, "condarc.d", "*.yaml")))
    paths += [os.path.join(home, ".config", "conda", ".condarc"), os.path.join(home, ".conda", ".condarc"),
              os.path.join(home, ".condarc")]
    if os.environ.get("CONDARC"):
        paths.append(os.environ["CONDARC"])
    return paths


def appendable(path):
    """Whether an existing file ``path`` opens for appending (conda's writability test of a magic file)."""
    if not os.path.isfile(path):
        return False
    try:
        open(path, "a").close()
    except OSError:
        return False
    return True


def first_writable(folders, magic):
    """The first folder whose ``magic`` file opens for appending or, where that file is missing, that can be made
    with it (conda's ``first_writable_envs_dir`` and ``PackageCacheData.first_writable``); None if none."""
    for folder in folders:
        path = os.path.join(folder, magic)
        if os.path.isfile(path):
            if appendable(path):
                return folder
            continue
        try:
            os.makedirs(folder, exist_ok=True)
            open(path, "a").close()
        except OSError:
            continue
        return folder
    return None


class CondaConfigError(Exception):
    """A .condarc that is not a YAML mapping."""


def load_sources(root):
    """[(path, mapping)] for each existing, non-empty configuration file, lowest precedence first."""
    sources = []
    for path in search_path(root):
        if not os.path.isfile(path):
            continue
        with open(path) as handle:
            text = handle.read()
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise CondaConfigError("ConfigurationLoadError: Unable to load configuration file.\n  path: %s\n  reason: %s" % (path, exc))
        if data is None:
            continue
        if not isinstance(data, dict):
            raise CondaConfigError("ConfigurationLoadError: Unable to load configuration file.\n  path: %s\n  reason: not a mapping" % path)
        sources.append((path, data))
    return sources


def channel_object(url, name=None):
    """A channel as ``conda config --show --json`` prints it."""
    parsed = urlparse(url.rstrip("/"))
    path = parsed.path if parsed.scheme == "file" else parsed.netloc + parsed.path
    token = None
    match = re.search(r"/t/([^/]+)", path)
    if match:
        token = match.group(1)
        path = path.replace(match.group(0), "", 1)
    if name is None:
        if "/pkgs/" in path:
            path, rest = path.split("/pkgs/", 1)
            name = "pkgs/" + rest
        elif path.count("/") >= 1 and name != "":
            path, name = path.rsplit("/", 1)
        else:
            name = ""
    elif name and path.endswith("/" + name):
        path = path[: -len(name) - 1]
    return {"auth": None, "location": path, "name": name, "package_filename": None, "platform": None,
            "scheme": parsed.scheme, "token": token}


class Config:
    """Merged settings for a root prefix, with conda's derived values."""

    def __init__(self, root, environ=None):
        self.root = root
        self.environ = os.environ if environ is None else environ
        self.sources = load_sources(root)
        self.values = {}
        for _path, data in self.sources:
            for key, value in data.items():
                key = "auto_activate" if key == "auto_activate_base" else key
                if key in MERGED_LISTS and isinstance(value, list):
                    self.values[key] = list(value) + [v for v in self.values.get(key, []) if v not in value]
                else:
                    self.values[key] = value

    def get(self, key, default=None):
        return self.values.get(key, default)

    @property
    def channel_alias(self):
        return str(self.get("channel_alias") or DEFAULT_CHANNEL_ALIAS).rstrip("/")

    @property
    def channels(self):
        return list(self.get("channels") or ["defaults"])

    @property
    def default_channels(self):
        return [str(c).rstrip("/") for c in (self.get("default_channels") or DEFAULT_CHANNELS)]

    @property
    def custom_channels(self):
        return {str(k): str(v).rstrip("/") for k, v in (self.get("custom_channels") or {}).items()}

    @property
    def root_writable(self):
        """conda's ``context.root_writable``: the base's ``conda-meta/history`` opens for appending."""
        return appendable(os.path.join(self.root, "conda-meta", "history"))

    @property
    def envs_dirs(self):
        """The configured folders, then the base's and the user's: the user's first where the base is not
        writable (conda's ``mockable_context_envs_dirs``)."""
        configured = [os.path.expanduser(p) for p in (self.get("envs_dirs") or [])]
        fixed = [os.path.join(self.root, "envs"), os.path.expanduser("~/.conda/envs")]
        return configured + (fixed if self.root_writable else fixed[::-1])

    @property
    def pkgs_dirs(self):
        """The configured caches, else the base's and the user's (conda's ``context.pkgs_dirs``)."""
        configured = [os.path.expanduser(p) for p in (self.get("pkgs_dirs") or [])]
        return configured or [os.path.join(self.root, "pkgs"), os.path.expanduser("~/.conda/pkgs")]

    @property
    def conda_build_local_paths(self):
        """The ``local`` multichannel: conda lists conda-build's output folders only where they exist."""
        candidates = [os.path.join(self.root, "conda-bld"), os.path.expanduser("~/conda-bld")]
        return [p for i, p in enumerate(candidates) if os.path.isdir(p) and p not in candidates[:i]]

    @property
    def offline(self):
        return bool(self.get("offline", False)) or self.environ.get("CONDA_OFFLINE", "").lower() in ("1", "true", "yes")

    @property
    def auto_accept_tos(self):
        plugins = self.get("plugins") or {}
        return bool(plugins.get("auto_accept_tos")) or \
            self.environ.get("CONDA_PLUGINS_AUTO_ACCEPT_TOS", "").lower() in ("1", "true", "yes")

    def channel_url(self, channel):
        """The base URL (no subdir) of a channel name or URL."""
        channel = str(channel).rstrip("/")
        if "://" in channel:
            return channel
        if channel.startswith("/"):
            return "file://" + channel
        custom = self.custom_channels
        for name in sorted(custom, key=len, reverse=True):
            if channel == name or channel.startswith(name + "/"):
                return custom[name] + "/" + channel
        return self.channel_alias + "/" + channel

    def expand_channels(self, names):
        """Channel URLs in order, ``defaults`` expanded to ``default_channels``, duplicates dropped."""
        urls = []
        for name in names:
            for url in (self.default_channels if name == "defaults" else [self.channel_url(name)]):
                if url not in urls:
                    urls.append(url)
        return urls

    def canonical_name(self, url):
        """The short name conda prints for a channel URL (``conda-forge``, ``pkgs/main``)."""
        url = url.rstrip("/")
        for name, base in self.custom_channels.items():
            if url == base + "/" + name:
                return name
        if url.startswith(self.channel_alias + "/"):
            return url[len(self.channel_alias) + 1:]
        if url.startswith(TOS_CHANNEL_PREFIX):
            return url[len("https://repo.anaconda.com/"):]
        return url

    def show(self):
        """Every setting as ``conda config --show --json`` prints it."""
        shown = dict(DEFAULTS)
        for key, value in self.values.items():
            if key in shown and key not in ("plugins",):
                shown[key] = value
        shown["channel_alias"] = channel_object(self.channel_alias, name="")
        shown["channels"] = self.channels
        shown["default_channels"] = [channel_object(u) for u in self.default_channels]
        custom = {name: channel_object(base + "/" + name, name=name) for name, base in self.custom_channels.items()}
        for url, default in zip(self.default_channels, shown["default_channels"]):
            custom.setdefault(default["name"], channel_object(url, name=default["name"]))
        custom.setdefault("pkgs/pro", channel_object("https://repo.anaconda.com/pkgs/pro", name="pkgs/pro"))
        shown["custom_channels"] = custom
        shown["custom_multichannels"] = {"defaults": shown["default_channels"],
                                         "local": [channel_object("file://" + p) for p in self.conda_build_local_paths]}
        shown["envs_dirs"] = self.envs_dirs
        shown["pkgs_dirs"] = self.pkgs_dirs
        shown["root_prefix"] = self.root
        shown["croot"] = os.path.join(self.root, "conda-bld")
        shown["offline"] = self.offline
        return shown
