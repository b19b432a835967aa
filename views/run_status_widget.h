#pragma once

#include <QLabel>

namespace autocomp {

class RunController;

// The status bar's live view of the active run: state, iteration, work in flight, tokens, dollars
// against the budget and elapsed time.
class RunStatusWidget : public QLabel
{
    Q_OBJECT
public:
    explicit RunStatusWidget(RunController *controller, QWidget *parent = nullptr);
    // Shows another run's controller (the shown run's, when the window drives several).
    void setController(RunController *controller);

private:
    void refresh();

    RunController *m_controller;
    QMetaObject::Connection m_connection;
};

} // namespace autocomp
