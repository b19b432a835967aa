#pragma once

#include <QWidget>

class QLabel;

namespace autocomp {

// What a store without runs shows ("welcomePanel"): how a first run goes, New Run…, the example run (disabled,
// saying why, when the build has none at `exampleResource`), Import Run Archive… and Open Store…. It only asks:
// the window does what each button requests.
class WelcomePage : public QWidget
{
    Q_OBJECT
public:
    explicit WelcomePage(const QString &exampleResource, QWidget *parent = nullptr);

    // Names the empty store.
    void setStorePath(const QString &nativePath);

Q_SIGNALS:
    void newRunRequested();
    void exampleRequested();
    void importRequested();
    void openStoreRequested();

private:
    QLabel *m_storeLabel;
};

} // namespace autocomp
