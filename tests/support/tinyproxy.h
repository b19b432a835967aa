#pragma once

#include <QProcess>
#include <QString>
#include <QTemporaryDir>

namespace autocomp::test {

// A real HTTP proxy (tinyproxy) on loopback for the duration of a test: its own configuration, log and pid
// file in a temporary folder, stopped when this goes away.
class TinyProxy
{
public:
    TinyProxy() = default;
    ~TinyProxy();
    TinyProxy(const TinyProxy &) = delete;
    TinyProxy &operator=(const TinyProxy &) = delete;

    // False, with the reason, when tinyproxy is not installed or does not start accepting in 10 s.
    bool start(QString *why);
    QString url() const; // http://127.0.0.1:PORT
    quint16 port() const { return m_port; }
    // What tinyproxy printed, for failure messages.
    QString output();

private:
    QTemporaryDir m_dir;
    QProcess m_process;
    quint16 m_port = 0;
};

} // namespace autocomp::test
