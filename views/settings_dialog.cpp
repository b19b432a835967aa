#include "settings_dialog.h"

#include "secrets/secret_store.h"
#include "settings.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

namespace autocomp {

SettingsDialog::SettingsDialog(Settings *settings, QWidget *parent)
    : QDialog(parent)
    , m_settings(settings)
    , m_secrets(new SecretStore(this))
    , m_network(new QNetworkAccessManager(this))
{
    setObjectName(QStringLiteral("settingsDialog"));
    setWindowTitle(tr("Settings"));

    const QStringList providers = Settings::providers();
    m_providers = new QTableWidget(int(providers.size()), ProviderColumnCount);
    m_providers->setObjectName(QStringLiteral("providersTable"));
    m_providers->setHorizontalHeaderLabels({tr("Provider"), tr("Enabled"), tr("Base URL"), tr("Concurrency"), tr("API key")});
    m_providers->verticalHeader()->hide();
    m_providers->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_providers->setSelectionMode(QAbstractItemView::SingleSelection);
    m_providers->horizontalHeader()->setSectionResizeMode(BaseUrlColumn, QHeaderView::Stretch);
    for (int row = 0; row < providers.size(); ++row) {
        const QString &p = providers.at(row);
        auto *name = new QTableWidgetItem(p);
        name->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
        m_providers->setItem(row, ProviderColumn, name);
        auto *enabled = new QTableWidgetItem;
        enabled->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable);
        enabled->setCheckState(settings->providerEnabled(p) ? Qt::Checked : Qt::Unchecked);
        m_providers->setItem(row, EnabledColumn, enabled);
        auto *url = new QTableWidgetItem(settings->providerBaseUrl(p));
        url->setToolTip(tr("Empty: %1").arg(settings->effectiveBaseUrl(p)));
        m_providers->setItem(row, BaseUrlColumn, url);
        auto *concurrency = new QSpinBox;
        concurrency->setRange(1, 256);
        concurrency->setValue(settings->providerConcurrency(p));
        m_providers->setCellWidget(row, ConcurrencyColumn, concurrency);
        auto *status = new QTableWidgetItem(tr("checking…"));
        status->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
        m_providers->setItem(row, KeyStatusColumn, status);
    }
    m_providers->resizeColumnToContents(ProviderColumn);

    m_keyLabel = new QLabel;
    m_keyEdit = new QLineEdit;
    m_keyEdit->setObjectName(QStringLiteral("apiKeyEdit"));
    m_keyEdit->setEchoMode(QLineEdit::Password);
    m_keyEdit->setPlaceholderText(tr("paste a key to store it in the keychain"));
    m_saveKey = new QPushButton(tr("Store Key"));
    m_saveKey->setObjectName(QStringLiteral("saveKeyButton"));
    m_deleteKey = new QPushButton(tr("Delete Key"));
    m_deleteKey->setObjectName(QStringLiteral("deleteKeyButton"));
    m_test = new QPushButton(tr("Test Connection"));
    m_test->setObjectName(QStringLiteral("testConnectionButton"));
    m_result = new QLabel;
    m_result->setObjectName(QStringLiteral("connectionResult"));
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *keyRow = new QHBoxLayout;
    keyRow->addWidget(m_keyLabel);
    keyRow->addWidget(m_keyEdit, 1);
    keyRow->addWidget(m_saveKey);
    keyRow->addWidget(m_deleteKey);
    keyRow->addWidget(m_test);

    auto *providersBox = new QGroupBox(tr("LLM providers"));
    auto *providersLayout = new QVBoxLayout(providersBox);
    providersLayout->addWidget(m_providers, 1);
    providersLayout->addLayout(keyRow);
    providersLayout->addWidget(m_result);

    m_sandbox = new QComboBox;
    m_sandbox->setObjectName(QStringLiteral("sandboxModeCombo"));
    m_sandbox->addItems({QStringLiteral("auto"), QStringLiteral("off"), QStringLiteral("required")});
    m_sandbox->setCurrentText(settings->sandboxMode());
    m_sandbox->setToolTip(tr("auto: bubblewrap when available; required: refuse to evaluate without it"));
    m_partition = new QLineEdit(settings->slurmPartition());
    m_partition->setObjectName(QStringLiteral("slurmPartition"));
    m_gres = new QLineEdit(settings->slurmGres());
    m_gres->setObjectName(QStringLiteral("slurmGres"));
    m_gres->setPlaceholderText(QStringLiteral("gpu:1"));
    m_time = new QLineEdit(settings->slurmTime());
    m_time->setObjectName(QStringLiteral("slurmTime"));
    m_time->setPlaceholderText(QStringLiteral("00:30:00"));
    auto *evalBox = new QGroupBox(tr("Evaluation"));
    auto *evalForm = new QFormLayout(evalBox);
    evalForm->addRow(tr("&Sandbox:"), m_sandbox);
    evalForm->addRow(tr("Slurm &partition:"), m_partition);
    evalForm->addRow(tr("Slurm &gres:"), m_gres);
    evalForm->addRow(tr("Slurm &time:"), m_time);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, this, [this] {
        apply();
        accept();
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(providersBox, 1);
    layout->addWidget(evalBox);
    layout->addWidget(buttons);
    resize(860, 620);

    connect(m_secrets, &SecretStore::keyRead, this, [this](const QString &provider, const QString &key, KeyStatus status, const QString &error) {
        if (QTableWidgetItem *item = m_providers->item(rowOf(provider), KeyStatusColumn)) {
            item->setText(toString(status));
            item->setToolTip(error);
        }
        if (!key.isEmpty())
            m_keys.insert(provider, key);
        if (provider == m_testing) {
            m_testing.clear();
            sendTest(provider, key);
        }
    });
    connect(m_secrets, &SecretStore::keyWritten, this, [this](const QString &provider, bool ok, const QString &error) {
        m_result->setText(ok ? tr("The %1 key was stored in the keychain.").arg(provider) : tr("The %1 key was not stored: %2").arg(provider, error));
        refreshKeyStatus(provider);
    });
    connect(m_secrets, &SecretStore::keyDeleted, this, [this](const QString &provider, bool ok, const QString &error) {
        m_result->setText(ok ? tr("The %1 key was deleted from the keychain.").arg(provider) : tr("The %1 key was not deleted: %2").arg(provider, error));
        m_keys.remove(provider);
        refreshKeyStatus(provider);
    });
    connect(m_saveKey, &QPushButton::clicked, this, [this] {
        const QString provider = selectedProvider();
        if (provider.isEmpty() || m_keyEdit->text().trimmed().isEmpty())
            return;
        m_secrets->writeKey(provider, m_keyEdit->text().trimmed());
        m_keyEdit->clear();
    });
    connect(m_deleteKey, &QPushButton::clicked, this, [this] {
        if (const QString provider = selectedProvider(); !provider.isEmpty())
            m_secrets->deleteKey(provider);
    });
    connect(m_test, &QPushButton::clicked, this, [this] {
        if (const QString provider = selectedProvider(); !provider.isEmpty())
            testConnection(provider);
    });
    connect(m_providers, &QTableWidget::itemSelectionChanged, this, &SettingsDialog::providerSelected);

    for (const QString &p : providers)
        refreshKeyStatus(p);
    m_providers->selectRow(0);
}

int SettingsDialog::rowOf(const QString &provider) const
{
    return int(Settings::providers().indexOf(provider));
}

QString SettingsDialog::selectedProvider() const
{
    const int row = m_providers->currentRow();
    return row >= 0 && row < Settings::providers().size() ? Settings::providers().at(row) : QString();
}

void SettingsDialog::refreshKeyStatus(const QString &provider)
{
    m_secrets->readKey(provider);
}

void SettingsDialog::providerSelected()
{
    const QString provider = selectedProvider();
    m_keyLabel->setText(tr("%1 key:").arg(provider));
    const bool enabled = !provider.isEmpty();
    for (QWidget *w : {static_cast<QWidget *>(m_keyEdit), static_cast<QWidget *>(m_saveKey), static_cast<QWidget *>(m_deleteKey),
                       static_cast<QWidget *>(m_test)})
        w->setEnabled(enabled);
}

void SettingsDialog::apply()
{
    const QStringList providers = Settings::providers();
    for (int row = 0; row < providers.size(); ++row) {
        const QString &p = providers.at(row);
        m_settings->setProviderEnabled(p, m_providers->item(row, EnabledColumn)->checkState() == Qt::Checked);
        m_settings->setProviderBaseUrl(p, m_providers->item(row, BaseUrlColumn)->text());
        m_settings->setProviderConcurrency(p, static_cast<QSpinBox *>(m_providers->cellWidget(row, ConcurrencyColumn))->value());
    }
    m_settings->setSandboxMode(m_sandbox->currentText());
    m_settings->setSlurmPartition(m_partition->text().trimmed());
    m_settings->setSlurmGres(m_gres->text().trimmed());
    m_settings->setSlurmTime(m_time->text().trimmed());
}

void SettingsDialog::testConnection(const QString &provider)
{
    if (provider == QLatin1String("gcp") || provider == QLatin1String("aws")) {
        const QString message = tr("Test Connection speaks the OpenAI-compatible and Anthropic model lists; %1 is not covered.").arg(provider);
        m_result->setText(message);
        Q_EMIT connectionTested(provider, false, message);
        return;
    }
    m_result->setText(tr("Testing %1…").arg(provider));
    if (m_keys.contains(provider)) {
        sendTest(provider, m_keys.value(provider));
        return;
    }
    m_testing = provider; // the key is read first; keyRead sends the request
    m_secrets->readKey(provider);
}

void SettingsDialog::sendTest(const QString &provider, const QString &key)
{
    const int row = rowOf(provider);
    QString base = row >= 0 ? m_providers->item(row, BaseUrlColumn)->text().trimmed() : QString();
    if (base.isEmpty())
        base = m_settings->effectiveBaseUrl(provider);
    while (base.endsWith(QLatin1Char('/')))
        base.chop(1);
    const bool anthropic = provider == QLatin1String("anthropic");
    QNetworkRequest request(QUrl(base + (anthropic && !base.endsWith(QLatin1String("/v1")) ? QStringLiteral("/v1/models") : QStringLiteral("/models"))));
    request.setTransferTimeout(15000);
    if (!key.isEmpty()) {
        if (anthropic) {
            request.setRawHeader("x-api-key", key.toUtf8());
            request.setRawHeader("anthropic-version", "2023-06-01");
        } else {
            request.setRawHeader("Authorization", "Bearer " + key.toUtf8());
        }
    }
    QNetworkReply *reply = m_network->get(request);
    const QString url = request.url().toString();
    connect(reply, &QNetworkReply::finished, this, [this, reply, provider, url] {
        reply->deleteLater();
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        const QJsonArray models = QJsonDocument::fromJson(reply->readAll()).object().value(QLatin1String("data")).toArray();
        const bool ok = reply->error() == QNetworkReply::NoError && status / 100 == 2;
        const QString message = ok ? tr("%1: HTTP %2, %n model(s) listed", nullptr, int(models.size())).arg(url).arg(status)
                                   : tr("%1: %2").arg(url, SecretStore::redact(status ? tr("HTTP %1 %2").arg(status).arg(reply->errorString())
                                                                                      : reply->errorString()));
        m_result->setText(message);
        Q_EMIT connectionTested(provider, ok, message);
    });
}

} // namespace autocomp
