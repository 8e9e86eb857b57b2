"""Sphinx settings of the docsite `make docs` builds from antsibull-docs' pages (dev/docs)."""

project = "aistack.gpu_node"
copyright = "aistack.gpu_node contributors"  # pylint: disable=redefined-builtin
html_title = "aistack.gpu_node"
html_short_title = html_title

# sphinx_antsibull_ext renders the role, module and filter pages antsibull-docs writes.
extensions = ["sphinx_antsibull_ext"]
html_theme = "sphinx_ansible_theme"
pygments_style = "ansible"
highlight_language = "YAML+Jinja"

# A site to read offline: no search index pages, no source copies, no links out for references.
html_show_sphinx = False
html_copy_source = False
html_use_index = False
html_use_modindex = False
# Every reference must resolve: a broken one is a warning, and the build fails on warnings.
nitpicky = True

# The theme's defaults link Ansible's own sites in the top bar and "/" as home (the file system's
# root when the site is opened from disk).
html_theme_options = {
    "topbar_links": {
        "Repository": "https://github.com/aistack/gpu_node",
        "Issues": "https://github.com/aistack/gpu_node/issues",
    },
    "documentation_home_url": "index.html",
    "display_version": False,
    "show_rtd_ethical_ads": False,
    "show_extranav": False,
}
html_static_path = ["_static"]
html_css_files = ["aistack.css"]
