#pragma once

#include <QDeadlineTimer>
#include <QObject>
#include <QString>

#include <functional>

class QProcess;

namespace autocomp {

// Vertex AI access tokens from `gcloud auth print-access-token`, run asynchronously and cached until
// shortly before they expire. Requests that need a token while one is being fetched share that fetch.
class GcloudTokenSource : public QObject
{
    Q_OBJECT
public:
    using Callback = std::function<void(const QString &token, const QString &error)>;

    explicit GcloudTokenSource(QObject *parent = nullptr);
    ~GcloudTokenSource() override;

    void setProgram(const QString &program) { m_program = program; }
    // Calls back with a token or an error; at once when a cached token is still valid.
    void fetch(Callback callback);
    void invalidate() { m_token.clear(); }

private:
    void done(const QString &token, const QString &error);

    QString m_program = QStringLiteral("gcloud");
    QString m_token;
    QDeadlineTimer m_expiry;
    QProcess *m_process = nullptr;
    QList<Callback> m_waiting;
};

} // namespace autocomp
