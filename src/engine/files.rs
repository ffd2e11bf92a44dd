//! Local files for uploads and downloads: tools take paths the user names instead of pushing
//! large base64 blobs through the agent. Paths must be absolute; sizes are capped; an existing
//! file is only replaced when the call says so.

use std::path::Path;

use plugins::api::ToolError;

/// Largest file a tool may upload or download.
pub const MAX_FILE_BYTES: u64 = 100 * 1024 * 1024;

fn check_path(path: &str) -> Result<&Path, ToolError> {
    let p = Path::new(path);
    if !p.is_absolute() {
        return Err(ToolError::invalid(format!(
            "'{path}' is not an absolute path; give the full path, e.g. /home/me/report.pdf"
        )));
    }
    if p.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
        return Err(ToolError::invalid(format!("'{path}' contains '..'; give the file's plain absolute path")));
    }
    Ok(p)
}

pub async fn read(path: &str) -> Result<Vec<u8>, ToolError> {
    let p = check_path(path)?.to_path_buf();
    let meta = tokio::fs::metadata(&p).await.map_err(|e| ToolError::invalid(format!("cannot read '{path}': {e}")))?;
    if !meta.is_file() {
        return Err(ToolError::invalid(format!("'{path}' is not a regular file")));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ToolError::invalid(format!("'{path}' is larger than {} MiB", MAX_FILE_BYTES / 1024 / 1024)));
    }
    tokio::fs::read(&p).await.map_err(|e| ToolError::invalid(format!("cannot read '{path}': {e}")))
}

pub async fn write(path: &str, bytes: Vec<u8>, overwrite: bool) -> Result<u64, ToolError> {
    let p = check_path(path)?.to_path_buf();
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ToolError::invalid(format!("the download is larger than {} MiB", MAX_FILE_BYTES / 1024 / 1024)));
    }
    if !overwrite && tokio::fs::try_exists(&p).await.unwrap_or(false) {
        return Err(ToolError::invalid(format!("'{path}' already exists; pass overwrite: true to replace it")));
    }
    if let Some(dir) = p.parent()
        && !tokio::fs::try_exists(dir).await.unwrap_or(false)
    {
        return Err(ToolError::invalid(format!("the folder '{}' does not exist", dir.display())));
    }
    // Write beside the target and rename, so a crash never leaves a half-written file behind.
    let tmp = p.with_file_name(format!(".{}.part", p.file_name().and_then(|n| n.to_str()).unwrap_or("download")));
    let len = bytes.len() as u64;
    tokio::fs::write(&tmp, bytes).await.map_err(|e| ToolError::invalid(format!("cannot write '{path}': {e}")))?;
    tokio::fs::rename(&tmp, &p).await.map_err(|e| ToolError::invalid(format!("cannot write '{path}': {e}")))?;
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn round_trip_and_refusals() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.txt");
        let fs = f.to_str().unwrap();
        assert_eq!(write(fs, b"hello".to_vec(), false).await.unwrap(), 5);
        assert_eq!(read(fs).await.unwrap(), b"hello");
        assert!(write(fs, b"x".to_vec(), false).await.is_err(), "no silent overwrite");
        assert_eq!(write(fs, b"x".to_vec(), true).await.unwrap(), 1);
        assert!(read("relative.txt").await.is_err());
        assert!(read(&format!("{}/../a.txt", dir.path().display())).await.is_err());
        assert!(read(dir.path().to_str().unwrap()).await.is_err(), "a folder is not a file");
        assert!(write("/definitely/not/here/x.txt", vec![1], false).await.is_err());
    }
}
