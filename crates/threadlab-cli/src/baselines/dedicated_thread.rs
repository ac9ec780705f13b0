//! A dedicated thread per queue fed by a channel: the analog of *The overhead of spawning threads*'s RunLoopQueue
//! (`performSelector:onThread:`), one OS thread that runs whatever is sent to it, in order.
//! Each task runs in a `dedicated-thread task` zone (one relaxed load when no recording is on).

use std::sync::mpsc::{channel, Sender};
use std::thread::JoinHandle;

type Task = Box<dyn FnOnce() + Send>;

/// One worker thread with its own FIFO channel. Dropping it closes the channel and joins the
/// thread after the tasks already sent have run.
pub struct DedicatedThread {
    tx: Option<Sender<Task>>,
    handle: Option<JoinHandle<()>>,
}

/// A cloneable handle for sending tasks to a [`DedicatedThread`] (also from its own tasks).
#[derive(Clone)]
pub struct Handle(Sender<Task>);

impl Handle {
    /// Queues `task`; ignored if the thread has shut down.
    pub fn send(&self, task: impl FnOnce() + Send + 'static) {
        let _ = self.0.send(Box::new(task));
    }
}

impl DedicatedThread {
    /// Starts the thread.
    pub fn new(name: &str) -> std::io::Result<DedicatedThread> {
        let (tx, rx) = channel::<Task>();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                for task in rx {
                    let _z = threadlab::zone!("dedicated-thread task");
                    task();
                }
            })?;
        Ok(DedicatedThread {
            tx: Some(tx),
            handle: Some(handle),
        })
    }

    /// A handle for sending tasks.
    pub fn handle(&self) -> Handle {
        Handle(
            self.tx
                .clone()
                .expect("DedicatedThread::handle: channel open until drop"),
        )
    }
}

impl Drop for DedicatedThread {
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
