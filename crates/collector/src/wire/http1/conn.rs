//! A keep-alive connection whose every read carries when its bytes arrived: the kernel's
//! receive timestamp on Linux (`SO_TIMESTAMPNS`), else the moment the read returned.

use std::io;
use std::time::{Duration, Instant};

use tokio::net::TcpStream;

use super::{Origin, READ_BUF};

/// One keep-alive connection and its read buffer.
pub(crate) struct Conn {
    pub(super) io: TcpStream,
    pub(super) buf: Box<[u8]>,
    #[cfg(target_os = "linux")]
    pub(super) cmsg: Vec<u8>,
    pub(super) reused: bool,
}

impl Conn {
    pub(super) async fn open(origin: &Origin) -> io::Result<Conn> {
        let io = TcpStream::connect((origin.host.as_str(), origin.port)).await?;
        io.set_nodelay(true)?;
        #[cfg(target_os = "linux")]
        {
            // Without kernel stamps the reads are stamped when they return.
            let _ = nix::sys::socket::setsockopt(
                &io,
                nix::sys::socket::sockopt::ReceiveTimestampns,
                &true,
            );
        }
        Ok(Conn {
            io,
            buf: vec![0u8; READ_BUF].into_boxed_slice(),
            #[cfg(target_os = "linux")]
            cmsg: nix::cmsg_space!(nix::sys::time::TimeSpec),
            reused: false,
        })
    }

    /// The server has not closed it (nor sent anything unasked).
    pub(super) fn is_open(&self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.io.try_read(&mut b), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }

    /// Reads what has arrived into `buf`; returns its length and when it reached this host
    /// (the kernel's receive stamp where there is one, else now). 0 is end of stream.
    pub(crate) async fn read(&mut self) -> io::Result<(usize, Instant)> {
        loop {
            self.io.readable().await?;
            match self.try_read() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                r => return r,
            }
        }
    }

    #[cfg(target_os = "linux")]
    pub(super) fn try_read(&mut self) -> io::Result<(usize, Instant)> {
        use std::os::fd::AsRawFd;
        let fd = self.io.as_raw_fd();
        let (buf, cmsg) = (&mut self.buf, &mut self.cmsg);
        self.io.try_io(tokio::io::Interest::READABLE, || {
            recv_stamped(fd, buf, cmsg)
        })
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn try_read(&mut self) -> io::Result<(usize, Instant)> {
        let n = self.io.try_read(&mut self.buf)?;
        Ok((n, Instant::now()))
    }

    /// The bytes of the last read.
    pub(crate) fn data(&self, n: usize) -> &[u8] {
        &self.buf[..n]
    }
}

/// `recvmsg` with the kernel's receive timestamp, converted to an `Instant`.
#[cfg(target_os = "linux")]
fn recv_stamped(
    fd: std::os::fd::RawFd,
    buf: &mut [u8],
    cmsg: &mut Vec<u8>,
) -> io::Result<(usize, Instant)> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
    let mut iov = [io::IoSliceMut::new(buf)];
    let msg =
        recvmsg::<()>(fd, &mut iov, Some(cmsg), MsgFlags::empty()).map_err(io::Error::from)?;
    let now = Instant::now();
    let mut at = now;
    if let Ok(cmsgs) = msg.cmsgs() {
        for c in cmsgs {
            if let ControlMessageOwned::ScmTimestampns(ts) = c {
                at = kernel_instant(ts.tv_sec(), ts.tv_nsec(), now);
            }
        }
    }
    Ok((msg.bytes, at))
}

/// A kernel receive stamp (wall clock) as an `Instant`: `now` less the stamp's age on the wall
/// clock read next to it. An age that is negative or over a minute (the wall clock stepped)
/// gives `now`.
#[cfg(target_os = "linux")]
pub(super) fn kernel_instant(sec: i64, nsec: i64, now: Instant) -> Instant {
    let (Ok(sec), Ok(nsec)) = (u64::try_from(sec), u32::try_from(nsec)) else {
        return now;
    };
    let stamp = std::time::UNIX_EPOCH + Duration::new(sec, nsec);
    match std::time::SystemTime::now().duration_since(stamp) {
        Ok(age) if age < Duration::from_secs(60) => now.checked_sub(age).unwrap_or(now),
        _ => now,
    }
}
