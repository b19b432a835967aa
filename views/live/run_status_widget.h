#pragma once

#include "live/run_controller.h"

#include <QDateTime>
#include <QLabel>

#include <optional>

namespace autocomp {

// The status bar's live view of the active run: state, iteration, work in flight, tokens, dollars
// against the budget and elapsed time.
class RunStatusWidget : public QLabel
{
    Q_OBJECT
public:
    explicit RunStatusWidget(RunController *controller, QWidget *parent = nullptr);
    // Shows another run's controller (the shown run's, when the window drives several).
    void setController(RunController *controller);
    // Shows a run this window does not drive, as the store tells it: `driver` is who drives it ("pid 1234 on
    // this host", "gone (...)"), `request` a pause/resume/stop asked of that process and not yet done. Its elapsed
    // time comes from the store's timestamps: from `created` to now while it runs, else to its last write `updated`.
    void setExternal(const RunController::Status &status, const QString &driver, const QString &request,
                     const QDateTime &created = {}, const QDateTime &updated = {});
    // Back to the controller's run.
    void clearExternal();
    bool showsExternal() const { return m_external.has_value(); }

private:
    void refresh();

    RunController *m_controller;
    struct External
    {
        RunController::Status status;
        QString driver;
        QString request;
        QDateTime created;
        QDateTime updated;
    };
    std::optional<External> m_external;
    QMetaObject::Connection m_connection;
};

} // namespace autocomp
