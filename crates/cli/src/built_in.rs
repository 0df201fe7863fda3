//! What a packaged `sbp` carries inside: the playground's site (feature `ui`: the folder
//! `SBP_UI_DIR` named when it was compiled; scripts/package.sh names the site with each file's
//! brotli and gzip forms). `sbp serve` serves it; `sbp check` reads the lessons in it.

#[cfg(feature = "ui")]
static SITE: include_dir::Dir<'static> = include_dir::include_dir!("$SBP_UI_DIR");

/// The UI's files, if this binary was built with them.
pub fn ui() -> Option<sbp_server::site::Files> {
    #[cfg(feature = "ui")]
    {
        fn walk(dir: &'static include_dir::Dir<'static>, out: &mut Vec<(String, &'static [u8])>) {
            for entry in dir.entries() {
                match entry {
                    include_dir::DirEntry::Dir(d) => walk(d, out),
                    include_dir::DirEntry::File(f) => {
                        let path = f.path().to_string_lossy().replace('\\', "/");
                        out.push((path, f.contents()));
                    }
                }
            }
        }
        let mut files = Vec::new();
        walk(&SITE, &mut files);
        Some(sbp_server::site::Files::new(files))
    }
    #[cfg(not(feature = "ui"))]
    None
}

/// Whether this binary carries the site (and so its lessons).
pub fn has_site() -> bool {
    cfg!(feature = "ui")
}

/// The lesson `id`'s file in the site this binary carries.
pub fn lesson(id: &str) -> Option<String> {
    #[cfg(feature = "ui")]
    {
        let file = SITE.get_file(format!("lessons/{id}.json"))?;
        return file.contents_utf8().map(str::to_string);
    }
    #[cfg(not(feature = "ui"))]
    {
        let _ = id;
        None
    }
}
