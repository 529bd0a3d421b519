// A device's waiting points: synchronize, its timed form, and the host's own
// waits (a timed wait's background wait, the trace's end). A plugin hands
// each failure of queued work to one synchronize; when the host's own wait
// takes it, it is kept here and the application's next waiting point
// reports it, after waiting for the host's waits still in flight (one of
// them may hold a failure of the work it waited for).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <set>
#include <thread>

#include "fork_safe_mutex.hpp"
#include "objects.hpp"

namespace px {

namespace {

// The plugin's synchronize of one device, its failure as a status and message.
void plugin_synchronize(const PluginInstance& plugin, int32_t local, const std::string& label, px_status& status,
                        std::string& message) {
    try {
        plugin.call([&] { return cat("work queued on ", label, " failed"); },
                    [&](px_plugin_error* e) { return plugin.api->synchronize(plugin.context, local, e); });
    } catch (const Failure& f) {
        status = f.status, message = f.message;
    } catch (const std::exception& e) {
        status = PX_ERROR_INTERNAL, message = cat("waiting for ", label, ": ", e.what());
    }
}

}  // namespace

struct DeviceImpl::Waits {
    std::mutex m;
    std::condition_variable changed;  // a host wait ended
    std::set<uint64_t> in_flight;     // the host's waits running, by number
    uint64_t started = 0;             // host waits numbered so far
    px_status kept_status = PX_OK;    // the first failure a host wait took
    std::string kept_message;         // ... and the ones after it, named after it
    // The background wait of the timed waits: `wanted` counts the timed
    // waits asked for; each covers the work queued before it, and `covered`
    // says how many a finished plugin wait has covered.
    uint64_t wanted = 0, covered = 0;
    uint64_t started_when_covered = 0;  // the host waits begun when `covered` last grew
    bool background = false;  // its thread runs
    bool closing = false;     // the device is going: the background thread lingers no more
    std::atomic<uint64_t> submitted{0};  // calls that queued work (note_submitted)
    uint64_t idle_upto = 0;              // `submitted` when a wait that ended well began: all of it ran
    std::atomic<uint64_t> generation{px_fork_generation()};  // the process these belong to

    // The lock, taken in this process. In a child forked since its last use
    // the parent's threads are gone with whatever they held here (the lock,
    // a wait on `changed`, host waits in flight): all of it is made anew
    // first, so the child's waits get the plugin's refusal instead of
    // waiting for threads it does not have.
    std::unique_lock<std::mutex> lock() {
        renew_once_in_child(generation, [this] {
            new (&m) std::mutex;  // (the parent's objects are dropped, not destroyed: a thread held them)
            new (&changed) std::condition_variable;
            in_flight.clear();
            background = false;
            covered = wanted;
            idle_upto = ~uint64_t(0);  // the parent's waits say nothing of this process: no timed wait is idle
        });
        return std::unique_lock<std::mutex>(m);
    }

    // (m held) A wait that began when `upto` calls had queued work ended with
    // `status`: PX_OK says all of it ran (a failure may be a refusal).
    void waited(uint64_t upto, px_status status) {
        if (status == PX_OK) idle_upto = std::max(idle_upto, upto);
    }
    // (m held)
    void keep(px_status status, const std::string& message) {
        if (kept_status == PX_OK) {
            kept_status = status, kept_message = message;
        } else if (kept_message.size() < PX_MESSAGE_MAX) {
            kept_message += " (then: " + message + ")";
        }
    }
    // One wait of the host's own on the plugin, in flight until it ends, its
    // failure kept (`held` holds m, and is let go while it waits).
    void host_wait(std::unique_lock<std::mutex>& held, const PluginInstance& plugin, int32_t local,
                   const std::string& label) {
        const uint64_t id = ++started;
        in_flight.insert(id);
        const uint64_t upto = submitted.load();
        held.unlock();
        px_status status = PX_OK;
        std::string message;
        plugin_synchronize(plugin, local, label, status, message);
        held.lock();
        waited(upto, status);
        if (status != PX_OK) keep(status, message);
        in_flight.erase(id);
        changed.notify_all();
    }
};

std::shared_ptr<DeviceImpl::Waits> DeviceImpl::make_waits() { return std::make_shared<Waits>(); }


void DeviceImpl::settle(const Failure* own) const {
    Waits& w = *waits_;
    std::unique_lock<std::mutex> lock = w.lock();
    const uint64_t begun = w.started;  // a host wait begun later took no failure this point waited for
    w.changed.wait(lock, [&] { return w.in_flight.empty() || *w.in_flight.begin() > begun; });
    report_kept(lock, own);
}

void DeviceImpl::report_kept(std::unique_lock<std::mutex>& lock, const Failure* own) const {
    Waits& w = *waits_;
    const px_status status = std::exchange(w.kept_status, PX_OK);
    std::string message = std::move(w.kept_message);
    w.kept_message.clear();
    lock.unlock();
    if (status == PX_OK) {
        if (own) throw *own;
        return;
    }
    if (own) message += " (then, since: " + own->message + ")";
    fail(status, message);
}

void DeviceImpl::note_submitted() const { waits_->submitted.fetch_add(1); }

void DeviceImpl::synchronize() const {
    const uint64_t upto = waits_->submitted.load();
    px_status status = PX_OK;
    std::string message;
    plugin_synchronize(*plugin, local, label, status, message);
    if (status == PX_OK) {
        std::unique_lock<std::mutex> lock = waits_->lock();
        waits_->waited(upto, status);
    }
    const Failure own(status, message);
    settle(status == PX_OK ? nullptr : &own);
}

void DeviceImpl::drain() const {
    std::unique_lock<std::mutex> lock = waits_->lock();
    waits_->host_wait(lock, *plugin, local, label);
}

DeviceImpl::~DeviceImpl() {
    Waits& w = *waits_;
    std::unique_lock<std::mutex> lock = w.lock();
    w.closing = true;
    w.changed.notify_all();
    w.changed.wait(lock, [&] { return !w.background; });
}

void DeviceImpl::synchronize_within(double seconds) const {
    std::unique_lock<std::mutex> lock = waits_->lock();
    if (!finished_within(lock, seconds))
        fail(PX_ERROR_DEVICE, label, ": its queued work did not finish within ", seconds,
             " s; the wait goes on, and a later wait of ", label, " reports how it ended");
    report_kept(lock, nullptr);
}

bool DeviceImpl::finished_within(double seconds) const {
    std::unique_lock<std::mutex> lock = waits_->lock();
    return finished_within(lock, seconds);
}

bool DeviceImpl::finished_within(std::unique_lock<std::mutex>& lock, double seconds) const {
    const std::shared_ptr<Waits> shared = waits_;
    Waits& w = *shared;
    // Nothing queued since a wait that has ended began, and no host wait
    // running or asked for (a lingering background thread runs none): idle,
    // whatever the time allowed (a thread's start would eat into a short one).
    if (w.covered >= w.wanted && w.in_flight.empty() && w.submitted.load() == w.idle_upto) return true;
    const uint64_t ticket = ++w.wanted;
    w.changed.notify_all();  // (a lingering background thread takes it)
    if (!w.background) {
        // One thread per device at a time, however often timed waits give
        // up: it waits again while a timed wait came after its last wait
        // began. It holds the plugin (never unloaded under it) and the
        // state, and the device waits for it to end.
        w.background = true;
        try {
            std::thread([shared, p = plugin, local = local, label = label]() mutable {
                Waits& bw = *shared;
                std::unique_lock<std::mutex> held = bw.lock();
                // It lingers a while for the next timed wait: waits in slices
                // (Python's) would otherwise start a thread for each.
                const auto more = [&] { return bw.covered < bw.wanted || bw.closing; };
                while (more() || bw.changed.wait_for(held, std::chrono::milliseconds(200), more)) {
                    if (bw.covered >= bw.wanted) break;  // closing
                    const uint64_t covering = bw.wanted;
                    bw.host_wait(held, *p, local, label);
                    bw.covered = covering;
                    bw.started_when_covered = bw.started;
                    bw.changed.notify_all();
                }
                // Its plugin reference goes first: the device, which waits for
                // this (~DeviceImpl), holds another, so the plugin is never
                // destroyed on this thread (at exit, beside the exit handlers).
                p.reset();
                bw.background = false;
                bw.changed.notify_all();
            }).detach();
        } catch (const std::exception& e) {  // no thread: none runs, and a later timed wait starts one
            w.background = false;
            fail(PX_ERROR_OUT_OF_MEMORY, "waiting for ", label, " at most ", seconds, " s: no thread could start (",
                 e.what(), ")");
        }
    }
    // Covered, and no other host wait begun by then still running (one may
    // hold a failure of the work this call waits for), within the time. Only
    // work not covered is unfinished: another host wait may be waiting for
    // work queued since (a failure it holds goes to the next waiting point).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    const auto settled = [&] {
        return w.covered >= ticket && (w.in_flight.empty() || *w.in_flight.begin() > w.started_when_covered);
    };
    return w.changed.wait_until(lock, deadline, settled) || w.covered >= ticket;
}

}  // namespace px
