#pragma once

#include <QDialog>
#include <QHash>

class QComboBox;
class QLabel;
class QLineEdit;
class QNetworkAccessManager;
class QNetworkReply;
class QPushButton;
class QTableWidget;

namespace autocomp {

class SecretStore;
class Settings;

// Preferences: LLM providers (base URL, concurrency, enabled, API key), the sandbox mode and Slurm
// defaults. Provider settings and the rest go to Settings when OK is pressed; API keys are saved or
// deleted through SecretStore at once, never to QSettings.
class SettingsDialog : public QDialog
{
    Q_OBJECT
public:
    enum ProviderColumns { ProviderColumn, EnabledColumn, BaseUrlColumn, ConcurrencyColumn, KeyStatusColumn, ProviderColumnCount };

    SettingsDialog(Settings *settings, QWidget *parent = nullptr);

    // Applies the form to Settings.
    void apply();
    // GET {base}/models with the provider's key; the answer lands in the "connectionResult" label.
    void testConnection(const QString &provider);
    QString selectedProvider() const;

Q_SIGNALS:
    void connectionTested(const QString &provider, bool ok, const QString &message);

private:
    void refreshKeyStatus(const QString &provider);
    void providerSelected();
    int rowOf(const QString &provider) const;
    void sendTest(const QString &provider, const QString &key);

    Settings *m_settings;
    SecretStore *m_secrets;
    QNetworkAccessManager *m_network;
    QHash<QString, QString> m_keys; // keys read for "Test connection", never shown
    QTableWidget *m_providers;
    QLineEdit *m_keyEdit;
    QPushButton *m_saveKey;
    QPushButton *m_deleteKey;
    QPushButton *m_test;
    QLabel *m_keyLabel;
    QLabel *m_result;
    QComboBox *m_sandbox;
    QLineEdit *m_partition;
    QLineEdit *m_gres;
    QLineEdit *m_time;
    QString m_testing; // provider whose key is being read for a test
};

} // namespace autocomp
